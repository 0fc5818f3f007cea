import { and, eq, inArray, isNotNull, lte, sql } from "drizzle-orm";
import { runBatch, statementsThatFit } from "../../../db/batches";
import { webhookDeliveries } from "../../../db/schema";
import type { Dependencies } from "../../../dependencies";
import { iso } from "../../../lib/time";
import { queueBatches, sendDeliveries } from "./enqueue";

/* The outbox's third step (write.ts says the three): on the cron trigger, what the request path could not enqueue. */

/**
 * Never claimed nor swept for this long (the send failed, or its message waits behind a backlog): the sweep sends
 * it, and a second message is harmless.
 */
export const UNENQUEUED_AFTER_MS = 60_000;
/** Due this long ago and still pending: its message was lost; the sweep sends it again. */
export const STUCK_AFTER_MS = 15 * 60_000;
/**
 * An extra attempt (redeliver, recover) still owed this long after it was asked for, or after its lease ran out: its
 * message was never sent, was lost, or its consumer died; the sweep sends one again. The row cannot tell a message
 * never sent from one on its way, so a queue slower than this gets a duplicate message, which the claim makes
 * harmless (delivery-claim.ts).
 */
export const EXTRA_OWED_AFTER_MS = 60_000;

/**
 * The outbox rows the sweep must (re-)enqueue, oldest first, at most `limit` of each kind; every read walks its own
 * index in order, so that a run takes the oldest rows and the next run the ones after. `lost`: pending deliveries
 * never enqueued or stuck, for their scheduled attempt (`markSwept`); `extras`: extra attempts owed too long
 * (`markExtrasSwept`). A delivery can be in both: a message for each, and the claim makes one attempt at a time.
 */
export async function deliveriesToSweep(deps: Dependencies, now: number, limit: number) {
  const { db } = deps;
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
export async function markExtrasSwept(deps: Dependencies, ids: number[], now: number): Promise<void> {
  const { db } = deps;
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
export async function markSwept(deps: Dependencies, ids: number[], now: number): Promise<void> {
  const { db } = deps;
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
export async function releaseSwept(deps: Dependencies, ids: number[]): Promise<void> {
  const { db } = deps;
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

/**
 * How many deliveries of each kind (never enqueued, stuck, owing an extra attempt) one run takes at most; the next
 * minute takes the rest.
 */
export const SWEEP_LIMIT = 500;

type Marks = {
  mark: (deps: Dependencies, ids: number[], now: number) => Promise<void>;
  release?: (deps: Dependencies, ids: number[]) => Promise<void>;
};

/**
 * The outbox sweep on the cron trigger (docs/architecture.md, The outbox): deliveries never enqueued, pending long
 * past due (a lost message), or owing an extra attempt a minute later go on the queue again; the consumer's claim
 * makes a duplicate harmless. Each chunk is marked, then sent; one that fails is logged (and released, for the first
 * kind) without stopping the rest. Answers how many messages were enqueued.
 */
export async function sweepOutbox(deps: Dependencies): Promise<number> {
  const now = deps.clock();
  const { lost, extras } = await deliveriesToSweep(deps, now, SWEEP_LIMIT);
  const sent = await sendChunks(deps, lost, now, { mark: markSwept, release: releaseSwept });
  return sent + (await sendChunks(deps, extras, now, { mark: markExtrasSwept }));
}

async function sendChunks(deps: Dependencies, ids: number[], now: number, { mark, release }: Marks) {
  let enqueued = 0;
  for (const chunk of queueBatches(ids)) {
    try {
      await mark(deps, chunk, now);
      await sendDeliveries(deps, chunk);
      enqueued += chunk.length;
    } catch (error) {
      console.warn(
        JSON.stringify({
          level: "warn",
          message: "sweep chunk failed",
          deliveries: chunk.length,
          error: String(error),
        }),
      );
      await release?.(deps, chunk).catch(() => {
        // D1 itself failed: the marked rows count as stuck after STUCK_AFTER_MS, and a later sweep takes them.
      });
    }
  }
  return enqueued;
}

/** How many of a moved business's deliveries are sent at its arrival; the sweep sends any beyond. */
const MOVED_IN_AT_ONCE = 1000;

/**
 * A business moved in (docs/scaling.md, Moving a business between shards): its deliveries copied pending and due are
 * put on the queue as soon as this shard takes it, not by the sweep a minute after they were written. Their messages
 * on the queue name the shard it left, where nothing is left to claim. One read, by the unenqueued deliveries' index.
 */
export async function enqueueMovedIn(deps: Dependencies, businessId: string): Promise<void> {
  const rows = await deps.db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        sql`${webhookDeliveries.status} = 'pending' and ${webhookDeliveries.enqueuedAt} is null`,
        eq(webhookDeliveries.businessId, businessId),
        lte(webhookDeliveries.nextAttemptAt, iso(deps.clock())),
      ),
    )
    .orderBy(webhookDeliveries.createdAt)
    .limit(MOVED_IN_AT_ONCE);
  deps.enqueue(rows.map((row) => row.id));
}
