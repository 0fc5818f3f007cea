import { and, eq, inArray, isNotNull, lte, type Placeholder, sql } from "drizzle-orm";
import { runBatch, statementsThatFit } from "../../db/batches";
import type { Database } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { idsIn, runStatements, statement } from "../../db/statements";
import type { DeliveryQueue } from "../../queues/delivery-message";

// The outbox's side: the delivery rows the request path writes and enqueues, and what the sweep sends again. The
// consumer's side is in delivery-claim.ts (the lease, the claim) and attempts.ts (the record, the retry schedule).

const iso = (ms: number) => new Date(ms).toISOString();

/** Never enqueued (the send failed) for this long: the sweep sends it. */
export const UNENQUEUED_AFTER_MS = 60_000;
/** Due this long ago and still pending: its message was lost; the sweep sends it again. */
export const STUCK_AFTER_MS = 15 * 60_000;
/**
 * An extra attempt (redeliver, recover) still owed this long after it was asked for, or after its lease ran out: its
 * message was never sent, was lost, or its consumer died; the sweep sends one again. The row cannot tell a message
 * never sent from one on its way, so a queue slower than this gets a duplicate message, which the claim makes
 * harmless (attempts.ts).
 */
export const EXTRA_OWED_AFTER_MS = 60_000;

/**
 * A new delivery row, pending and due now, with no attempt yet, as an INSERT ... SELECT writes it: the outbox's
 * deliveries of an event (events.ts); a redelivery or a recover adds no row, it makes another attempt of the same one.
 * Every column in the table's order (drizzle's rule for an insert from a select); the business, event and endpoint are
 * those of the row it is selected from.
 */
export const newDeliveryColumns = <Business, Event, Endpoint>(
  from: { businessId: Business; eventId: Event; endpointId: Endpoint },
  now: Placeholder,
) => ({
  id: sql<number>`null`.as("id"),
  businessId: from.businessId,
  eventId: from.eventId,
  endpointId: from.endpointId,
  status: sql<"pending">`'pending'`.as("status"),
  attemptCount: sql<number>`0`.as("attempt_count"),
  nextAttemptAt: sql<string>`${now}`.as("next_attempt_at"),
  enqueuedAt: sql<string | null>`null`.as("enqueued_at"),
  leaseUntil: sql<string | null>`null`.as("lease_until"),
  completedAt: sql<string | null>`null`.as("completed_at"),
  createdAt: sql<string>`${now}`.as("created_at"),
  extraAttemptAt: sql<string | null>`null`.as("extra_attempt_at"),
});

/** Cloudflare Queues takes at most 100 messages in one `sendBatch`. */
const QUEUE_BATCH_LIMIT = 100;

/** Delivery ids in groups of at most one `sendBatch`. */
export function queueBatches(ids: number[]): number[][] {
  const batches: number[][] = [];
  for (let i = 0; i < ids.length; i += QUEUE_BATCH_LIMIT) batches.push(ids.slice(i, i + QUEUE_BATCH_LIMIT));
  return batches;
}

/**
 * One message per delivery, ids only: the consumer re-reads the rest from D1, the outbox and the record
 * (docs/architecture.md, Storage and state).
 */
export async function sendDeliveries(queue: DeliveryQueue, ids: number[]): Promise<void> {
  await queue.sendBatch(ids.map((deliveryId) => ({ body: { deliveryId } })));
}

const enqueuedMark = statement<{ ids: string; now: string }>()((db, { ids, now }) =>
  db
    .update(webhookDeliveries)
    .set({ enqueuedAt: sql`${now}` })
    .where(inArray(webhookDeliveries.id, idsIn(ids))),
);

/** After a send on the request path: enqueued, so that the sweep leaves these rows alone. One statement, any count. */
export async function markEnqueued(db: Database, ids: number[], now: number): Promise<void> {
  await runStatements(db, [enqueuedMark({ ids: JSON.stringify(ids), now: iso(now) })]);
}

/**
 * The outbox rows the sweep must (re-)enqueue, oldest first, at most `limit` of each kind; every read walks its own
 * index in order, so that a run takes the oldest rows and the next run the ones after. `lost`: pending deliveries
 * never enqueued or stuck, for their scheduled attempt (`markSwept`); `extras`: extra attempts owed too long
 * (`markExtrasSwept`). A delivery can be in both: a message for each, and the claim makes one attempt at a time.
 */
export async function deliveriesToSweep(db: Database, now: number, limit: number) {
  const [unenqueued, stuck, extras] = await db.batch([
    db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(
          sql`${webhookDeliveries.status} = 'pending' and ${webhookDeliveries.enqueuedAt} is null`,
          lte(webhookDeliveries.createdAt, iso(now - UNENQUEUED_AFTER_MS)),
        ),
      )
      .orderBy(webhookDeliveries.createdAt)
      .limit(limit),
    db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(
        and(eq(webhookDeliveries.status, "pending"), lte(webhookDeliveries.nextAttemptAt, iso(now - STUCK_AFTER_MS))),
      )
      .orderBy(webhookDeliveries.status, webhookDeliveries.nextAttemptAt)
      .limit(limit),
    db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(extraOwedSince(iso(now - EXTRA_OWED_AFTER_MS)))
      .orderBy(webhookDeliveries.extraAttemptAt)
      .limit(limit),
  ]);
  return {
    lost: [...new Set([...unenqueued, ...stuck].map((row) => row.id))],
    extras: extras.map((row) => row.id),
  };
}

/** An extra attempt owed since at most `before` (the index `webhook_deliveries_extra_owed`: owing rows only). */
const extraOwedSince = (before: string) =>
  and(isNotNull(webhookDeliveries.extraAttemptAt), lte(webhookDeliveries.extraAttemptAt, before));

/**
 * Before the sweep sends a chunk of owed extra attempts: owed from now, so that the next run takes the rows after
 * these, and these again a minute later if this send fails or its messages are lost: no release is needed. A row
 * asked for again, or claimed, since it was read is left as it is.
 */
export async function markExtrasSwept(db: Database, ids: number[], now: number): Promise<void> {
  await runBatch(
    db,
    statementsThatFit(ids, (slice) =>
      db
        .update(webhookDeliveries)
        .set({ extraAttemptAt: iso(now) })
        .where(and(inArray(webhookDeliveries.id, slice), extraOwedSince(iso(now - EXTRA_OWED_AFTER_MS)))),
    ),
  );
}

/**
 * Before the sweep sends a chunk: enqueued and due now, so that neither kind of sweep query takes these rows again
 * for STUCK_AFTER_MS. Marking first is what makes every run progress: the next run takes the rows after these,
 * whatever happened to this chunk. If the send then fails, `releaseSwept` hands the chunk to the next minute; if the
 * Worker dies between the two, the rows are stuck (due, pending) and the sweep takes them again after
 * STUCK_AFTER_MS: a chunk is never lost, and never the only thing a run can do.
 */
export async function markSwept(db: Database, ids: number[], now: number): Promise<void> {
  await runBatch(
    db,
    statementsThatFit(ids, (slice) =>
      db
        .update(webhookDeliveries)
        .set({ enqueuedAt: iso(now), nextAttemptAt: iso(now) })
        .where(and(inArray(webhookDeliveries.id, slice), eq(webhookDeliveries.status, "pending"))),
    ),
  );
}

/** A chunk whose send failed: never enqueued again, so the next minute's sweep takes it first. */
export async function releaseSwept(db: Database, ids: number[]): Promise<void> {
  await runBatch(
    db,
    statementsThatFit(ids, (slice) =>
      db
        .update(webhookDeliveries)
        .set({ enqueuedAt: null })
        .where(and(inArray(webhookDeliveries.id, slice), eq(webhookDeliveries.status, "pending"))),
    ),
  );
}
