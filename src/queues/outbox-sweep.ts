import { type Database, database } from "../db/client";
import {
  deliveriesToSweep,
  markExtrasSwept,
  markSwept,
  queueBatches,
  releaseSwept,
  sendDeliveries,
} from "../domain/webhooks/deliveries";
import type { Env } from "../env";

/**
 * How many deliveries of each kind (never enqueued, stuck, owing an extra attempt) one run takes at most; the next
 * minute takes the rest.
 */
export const SWEEP_LIMIT = 500;

type Marks = {
  mark: (db: Database, ids: number[], now: number) => Promise<void>;
  release?: (db: Database, ids: number[]) => Promise<void>;
};

/**
 * The outbox sweep on the cron trigger (docs/architecture.md, The outbox): deliveries written but never enqueued, or
 * pending long past their due time because their message was lost, go on the queue again; and so do the extra
 * attempts a partner asked for (redeliver, recover) still owed a minute later. A duplicate is harmless: the consumer
 * claims a delivery before sending it. Each chunk is marked, then sent (see `markSwept`, `markExtrasSwept`), and a
 * chunk that fails is logged (and released, for the first kind) without stopping the chunks after it. Answers how
 * many messages were enqueued.
 */
export async function sweepOutbox(env: Env, now = Date.now()): Promise<number> {
  const db = database(env.DB);
  const { lost, extras } = await deliveriesToSweep(db, now, SWEEP_LIMIT);
  const sent = await sendChunks(env, db, lost, now, { mark: markSwept, release: releaseSwept });
  return sent + (await sendChunks(env, db, extras, now, { mark: markExtrasSwept }));
}

async function sendChunks(env: Env, db: Database, ids: number[], now: number, { mark, release }: Marks) {
  let enqueued = 0;
  for (const chunk of queueBatches(ids)) {
    try {
      await mark(db, chunk, now);
      await sendDeliveries(env.WEBHOOK_DELIVERIES, chunk);
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
      await release?.(db, chunk).catch(() => {
        // D1 itself failed: the marked rows count as stuck after STUCK_AFTER_MS, and a later sweep takes them.
      });
    }
  }
  return enqueued;
}
