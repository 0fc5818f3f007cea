import { and, eq, inArray, isNull, lte, ne, or, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { deliveryAttempts, events, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { idsIn, runStatements, statement } from "../../db/statements";
import { healthRecords } from "./health";

/**
 * Spec, Answering a delivery: "Retries after 1, 5, 30, 120 and 720 minutes: six attempts in all". The delay after
 * failed attempt n is RETRY_DELAYS_SECONDS[n - 1]; 43,200 s is also Cloudflare Queues' largest delay.
 */
export const RETRY_DELAYS_SECONDS = [60, 300, 1800, 7200, 43_200] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

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

export type AttemptOutcome = { ok: boolean; statusCode: number | null; error: string | null; durationMs: number };

/** One attempt as the consumer made it: the delivery it claimed, when it sent it, and what came back. */
export type Attempt = { delivery: ClaimedDelivery; attemptedAt: number; outcome: AttemptOutcome };

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Takes a lease on every delivery of `ids` that has an attempt to make now, so that a duplicate message, or a message
 * of a delivery already delivered, failed, deleted with its endpoint, or leased by another consumer, sends nothing
 * (docs/webhooks.md, How delivery works inside). The scheduled attempt first: a pending, due and unleased delivery.
 * Else the extra attempt owed outside the schedule (redeliver, recover), by any message of the delivery: its lease is
 * `extra_attempt_at` itself, so that it never holds up the schedule's own attempts. One attempt per delivery and
 * batch. One round trip for a whole queue batch (src/domain/webhooks/README.md): the conditional updates and the
 * reads of what to send run in one D1 batch, so one transaction. Answers the deliveries this call claimed, by id; an
 * id given twice is claimed once.
 */
export async function claimDeliveries(db: Database, ids: number[], now: number): Promise<Map<number, ClaimedDelivery>> {
  const unique = JSON.stringify([...new Set(ids)]);
  const leaseUntil = iso(now + LEASE_MS);
  // An owed extra attempt is due once its time is within the tolerance: its lease ends that much later, so that it
  // holds as long as a scheduled attempt's.
  const extraLease = iso(now + LEASE_MS + DUE_TOLERANCE_MS);
  const dueBy = iso(now + DUE_TOLERANCE_MS);
  const [scheduled, extra, rows] = (await runStatements(db, [
    leasesTaken({ ids: unique, leaseUntil, dueBy, now: iso(now) }),
    extraLeasesTaken({ ids: unique, extraLease, dueBy, leaseUntil }),
    claimedRows({ ids: unique }),
  ])) as [Array<{ id: number }>, Array<{ id: number }>, Omit<ClaimedDelivery, "kind" | "lease">[]];
  const claims = new Map<number, Pick<ClaimedDelivery, "kind" | "lease">>();
  for (const { id } of extra) claims.set(id, { kind: "extra", lease: extraLease });
  for (const { id } of scheduled) claims.set(id, { kind: "scheduled", lease: leaseUntil });
  return new Map(
    rows.flatMap((row) => {
      const claim = claims.get(row.id);
      return claim ? [[row.id, { ...row, ...claim }] as const] : [];
    }),
  );
}

/** The lease of every pending, due and unleased delivery of `ids` (a JSON array: one statement for a whole batch). */
const leasesTaken = statement<{ ids: string; leaseUntil: string; dueBy: string; now: string }>()(
  (db, { ids, leaseUntil, dueBy, now }) =>
    db
      .update(webhookDeliveries)
      .set({ leaseUntil: sql`${leaseUntil}` })
      .where(
        and(
          inArray(webhookDeliveries.id, idsIn(ids)),
          eq(webhookDeliveries.status, "pending"),
          lte(webhookDeliveries.nextAttemptAt, dueBy),
          or(isNull(webhookDeliveries.leaseUntil), lte(webhookDeliveries.leaseUntil, now)),
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
      event: events.type,
      envelope: events.envelope,
      url: webhookEndpoints.url,
      secret: webhookEndpoints.secret,
      previousSecret: webhookEndpoints.previousSecret,
      previousSecretExpiresAt: webhookEndpoints.previousSecretExpiresAt,
    })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
    .where(inArray(webhookDeliveries.id, idsIn(ids))),
);

/**
 * The delay before the attempt after this one, or undefined when this one finishes the delivery, or is an extra one:
 * the schedule's own message carries the schedule, so the extra attempt's message is acked whatever its outcome.
 */
function retryDelayAfter({ delivery, outcome }: Attempt): number | undefined {
  if (delivery.kind === "extra") return undefined;
  const attemptCount = delivery.attemptCount + 1;
  return outcome.ok || attemptCount >= MAX_ATTEMPTS ? undefined : RETRY_DELAYS_SECONDS[attemptCount - 1];
}

/**
 * Records every attempt of a queue batch and moves each delivery on (spec: Webhook delivery states), in ONE D1 batch:
 * 2xx → delivered; a failure before the sixth attempt → pending, due after the next delay of the schedule; the sixth
 * failure → failed. An extra attempt is recorded in the history too, and moves nothing but its own debt: 2xx →
 * delivered (a pending delivery's schedule ends there), a failure leaves the delivery as it was (failed stays failed,
 * pending keeps its count and its next attempt, delivered stays delivered). The same batch keeps the endpoints' health
 * (health.ts: last success, 410 Gone, 3 days of failures). Answers, in the order of `attempts`, the delay before each
 * delivery's next attempt, or undefined when it is finished or the attempt was an extra one. The batch is one
 * transaction: if it fails, no attempt of it is recorded and every delivery stays under its lease (docs/reliability.md,
 * Faults produced and survived).
 */
export async function recordAttempts(db: Database, attempts: Attempt[]): Promise<Array<number | undefined>> {
  const retryDelays = attempts.map(retryDelayAfter);
  const statements = attempts.flatMap((attempt, i) => {
    const { delivery, outcome, attemptedAt } = attempt;
    const retryInSeconds = retryDelays[i];
    const finishedAt = attemptedAt + outcome.durationMs;
    const record = attemptRecord({
      delivery: delivery.id,
      attemptedAt: iso(attemptedAt),
      statusCode: outcome.statusCode,
      error: outcome.error,
      durationMs: outcome.durationMs,
    });
    if (delivery.kind === "extra") {
      return [
        record,
        extraAttemptRecorded({
          delivery: delivery.id,
          delivered: outcome.ok ? 1 : 0,
          finishedAt: iso(finishedAt),
          lease: delivery.lease,
        }),
      ];
    }
    return [
      record,
      deliveryMovedOn({
        delivery: delivery.id,
        attemptCount: delivery.attemptCount + 1,
        status: outcome.ok ? "delivered" : retryInSeconds === undefined ? "failed" : "pending",
        nextAttemptAt: iso(finishedAt + (retryInSeconds ?? 0) * 1000),
        completedAt: retryInSeconds === undefined ? iso(finishedAt) : null,
      }),
    ];
  });
  await runStatements(db, [...statements, ...healthRecords(attempts)]);
  return retryDelays;
}

/**
 * One attempt's row, written only while the delivery exists: one deleted with its endpoint during the send would
 * otherwise fail the foreign key, and with it the records of the whole batch. Rendered once (src/db/statements.ts),
 * not once per attempt, which for a batch of 100 attempts would build 200 statements' SQL. Binds 5 parameters.
 */
const attemptRecord = statement<{
  delivery: number;
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}>()((db, { delivery, attemptedAt, statusCode, error, durationMs }) =>
  db.insert(deliveryAttempts).select(
    db
      .select({
        // Every column, in the table's order (drizzle's rule for an insert from a select); null numbers the row.
        id: sql<number>`null`.as("id"),
        deliveryId: webhookDeliveries.id,
        attemptedAt: sql<string>`${attemptedAt}`.as("attempted_at"),
        statusCode: sql<number | null>`${statusCode}`.as("status_code"),
        error: sql<string | null>`${error}`.as("error"),
        durationMs: sql<number>`${durationMs}`.as("duration_ms"),
      })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, delivery)),
  ),
);

/**
 * The delivery after a scheduled attempt: its count, its state, when it is due next, and its lease given back; only
 * while it is pending, as an extra attempt made at the same time may have delivered it.
 */
const deliveryMovedOn = statement<{
  delivery: number;
  attemptCount: number;
  status: "delivered" | "failed" | "pending";
  nextAttemptAt: string;
  completedAt: string | null;
}>()((db, { delivery, attemptCount, status, nextAttemptAt, completedAt }) =>
  db
    .update(webhookDeliveries)
    .set({
      attemptCount: sql`${attemptCount}`,
      status: sql`${status}`,
      nextAttemptAt: sql`${nextAttemptAt}`,
      completedAt: sql`${completedAt}`,
      leaseUntil: null,
    })
    .where(and(eq(webhookDeliveries.id, delivery), eq(webhookDeliveries.status, "pending"))),
);

/**
 * The delivery after an extra attempt (SQLite computes every SET from the row before the update): delivered on a
 * 2xx, finished then unless it already was; the debt cleared only while `extra_attempt_at` is still this attempt's
 * lease, so that one asked for again meanwhile is still owed. The count, the schedule and the scheduled attempt's
 * lease are left alone.
 */
const extraAttemptRecorded = statement<{ delivery: number; delivered: number; finishedAt: string; lease: string }>()(
  (db, { delivery, delivered, finishedAt, lease }) =>
    db
      .update(webhookDeliveries)
      .set({
        status: sql`case when ${delivered} = 1 then 'delivered' else ${webhookDeliveries.status} end`,
        completedAt: sql`case when ${delivered} = 1 and ${webhookDeliveries.status} <> 'delivered' then ${finishedAt} else ${webhookDeliveries.completedAt} end`,
        extraAttemptAt: sql`case when ${webhookDeliveries.extraAttemptAt} = ${lease} then null else ${webhookDeliveries.extraAttemptAt} end`,
      })
      .where(eq(webhookDeliveries.id, delivery)),
);
