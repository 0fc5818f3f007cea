import { and, eq, inArray, isNull, lte, ne, or, sql } from "drizzle-orm";
import { businesses, events, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { idsIn, runStatements, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { iso } from "../../lib/time";

// The claim step of the delivery pipeline (src/domain/webhooks/README.md): which deliveries of a queue batch the
// consumer attempts, each under a lease. What the attempts did is recorded in attempts.ts.

/** Longer than the 10-second answer time plus the recording: a crashed attempt frees its delivery after this. */
export const LEASE_MS = 30_000;
/** Queue delays are not exact: a message this early still counts as due. */
const DUE_TOLERANCE_MS = 5_000;

/**
 * What an attempt is: the delivery's next one on the retry schedule (it counts, and moves the schedule on), or the one
 * attempt a partner asked for outside it (`webhook_deliveries.extra_attempt_at`: redeliver, or recover of a failed
 * delivery), which is recorded in the history and changes nothing else unless it succeeds.
 */
export type AttemptKind = "scheduled" | "extra";

export type ClaimedDelivery = {
  id: number;
  kind: AttemptKind;
  /** The lease this claim wrote: an extra attempt clears what it was owed only while the lease is still its own. */
  lease: string;
  endpointId: number;
  /** The event's id, which is its envelope's `id` (`evt_…`): the delivery's `webhook-id`. */
  eventId: string;
  attemptCount: number;
  event: string;
  envelope: string;
  url: string;
  secret: string;
  /** During a rotation, the endpoint's previous secret until it expires (docs/webhooks.md, Rotating a secret). */
  previousSecret: string | null;
  previousSecretExpiresAt: string | null;
};

/**
 * Leases every delivery of `ids` with an attempt to make now, so that a duplicate message, or one of a delivery done,
 * deleted or leased elsewhere, sends nothing (docs/webhooks.md, How delivery works inside): the scheduled attempt of a
 * pending, due, unleased delivery, else an extra one owed, leased by `extra_attempt_at` itself. One D1 batch for the
 * whole queue batch. Answers the deliveries claimed, by id, and those held back while their business moves.
 */
export async function claimDeliveries(
  deps: Dependencies,
  ids: number[],
  now: number,
): Promise<{ claimed: Map<number, ClaimedDelivery>; held: Set<number> }> {
  const unique = JSON.stringify([...new Set(ids)]);
  const leaseUntil = iso(now + LEASE_MS);
  // An owed extra attempt is due once its time is within the tolerance: its lease ends that much later, so that it
  // holds as long as a scheduled attempt's.
  const extraLease = iso(now + LEASE_MS + DUE_TOLERANCE_MS);
  const dueBy = iso(now + DUE_TOLERANCE_MS);
  const [scheduled, extra, rows, eventRows] = (await runStatements(deps.db, [
    leasesTaken({ ids: unique, leaseUntil, dueBy, now: iso(now) }),
    extraLeasesTaken({ ids: unique, extraLease, dueBy, leaseUntil }),
    claimedRows({ ids: unique }),
    eventsOfClaimed({ ids: unique }),
  ])) as [
    Array<{ id: number }>,
    Array<{ id: number }>,
    (Omit<ClaimedDelivery, "kind" | "lease" | "event" | "envelope"> & { businessMoving: boolean })[],
    Array<{ id: string; event: string; envelope: string }>,
  ];
  const eventsById = new Map(eventRows.map((row) => [row.id, row]));
  const claims = new Map<number, Pick<ClaimedDelivery, "kind" | "lease">>();
  for (const { id } of extra) claims.set(id, { kind: "extra", lease: extraLease });
  for (const { id } of scheduled) claims.set(id, { kind: "scheduled", lease: leaseUntil });
  const claimed = new Map<number, ClaimedDelivery>();
  const held = new Set<number>();
  for (const { businessMoving, ...row } of rows) {
    const claim = claims.get(row.id);
    const event = eventsById.get(row.eventId);
    if (claim && event) claimed.set(row.id, { ...row, ...claim, event: event.event, envelope: event.envelope });
    else if (businessMoving) held.add(row.id);
  }
  return { claimed, held };
}

/**
 * The delivery's business is not being moved: while it is, its rows are being copied to another shard, and an attempt
 * recorded here would differ from the copy and stop the move (docs/scaling.md, Moving a business between shards). Its
 * messages wait instead, and after the move the new shard sends what is left.
 */
const businessNotMoving = sql`not exists (select 1 from ${businesses} where ${businesses.id} = ${webhookDeliveries.businessId} and ${businesses.movingSince} is not null)`;

/** The lease of every pending, due and unleased delivery of `ids` (a JSON array: one statement for a whole batch). */
const leasesTaken = statement<{ ids: string; leaseUntil: string; dueBy: string; now: string }>()(
  (db, { ids, leaseUntil, dueBy, now }) =>
    db
      .update(webhookDeliveries)
      // A claim is the proof that the delivery's message reached the queue: the request path marks nothing after
      // its send (docs/architecture.md, The outbox), and the sweep leaves a claimed delivery to its schedule.
      .set({ leaseUntil: sql`${leaseUntil}`, enqueuedAt: sql`coalesce(${webhookDeliveries.enqueuedAt}, ${now})` })
      .where(
        and(
          inArray(webhookDeliveries.id, idsIn(ids)),
          eq(webhookDeliveries.status, "pending"),
          lte(webhookDeliveries.nextAttemptAt, dueBy),
          or(isNull(webhookDeliveries.leaseUntil), lte(webhookDeliveries.leaseUntil, now)),
          businessNotMoving,
        ),
      )
      .returning({ id: webhookDeliveries.id }),
);

/**
 * The extra attempt of every delivery of `ids` that owes one, due and not under its own running lease, unless the
 * statement before took the delivery for its scheduled attempt in this same batch (its `lease_until` is this batch's):
 * then the extra waits for a message of its own. Whatever the delivery's status: a failed or delivered one is
 * attempted once more all the same.
 */
const extraLeasesTaken = statement<{ ids: string; extraLease: string; dueBy: string; leaseUntil: string }>()(
  (db, { ids, extraLease, dueBy, leaseUntil }) =>
    db
      .update(webhookDeliveries)
      .set({ extraAttemptAt: sql`${extraLease}` })
      .where(
        and(
          inArray(webhookDeliveries.id, idsIn(ids)),
          lte(webhookDeliveries.extraAttemptAt, dueBy),
          or(isNull(webhookDeliveries.leaseUntil), ne(webhookDeliveries.leaseUntil, leaseUntil)),
          businessNotMoving,
        ),
      )
      .returning({ id: webhookDeliveries.id }),
);

/**
 * What to send for each delivery of `ids`. Every id is read, not only the leased ones: a read cannot tell this call's
 * lease from another consumer's taken in the same millisecond. The lease update's own answer says which are ours.
 */
const claimedRows = statement<{ ids: string }>()((db, { ids }) =>
  db
    .select({
      id: webhookDeliveries.id,
      endpointId: webhookDeliveries.endpointId,
      eventId: webhookDeliveries.eventId,
      attemptCount: webhookDeliveries.attemptCount,
      url: webhookEndpoints.url,
      secret: webhookEndpoints.secret,
      previousSecret: webhookEndpoints.previousSecret,
      previousSecretExpiresAt: webhookEndpoints.previousSecretExpiresAt,
      businessMoving: sql<boolean>`not ${businessNotMoving}`.mapWith(Boolean),
    })
    .from(webhookDeliveries)
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(inArray(webhookDeliveries.id, idsIn(ids))),
);

/**
 * The envelope of each event of `ids`' deliveries, once however many endpoints receive it: read apart from the
 * deliveries, since an envelope is most of a claim's bytes, and a batch holds each event once per endpoint.
 */
const eventsOfClaimed = statement<{ ids: string }>()((db, { ids }) =>
  db
    .select({ id: events.id, event: events.type, envelope: events.envelope })
    .from(events)
    .where(
      inArray(
        events.id,
        db
          .select({ id: webhookDeliveries.eventId })
          .from(webhookDeliveries)
          .where(inArray(webhookDeliveries.id, idsIn(ids))),
      ),
    ),
);
