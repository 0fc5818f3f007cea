import { database } from "../db/client";
import {
  deliveriesToSweep,
  markSwept,
  queueBatches,
  releaseSwept,
  sendDeliveries,
} from "../domain/webhooks/deliveries";
import type { Env } from "../env";

/** How many deliveries of each kind (never enqueued, stuck) one run takes at most; the next minute takes the rest. */
export const SWEEP_LIMIT = 500;

/**
 * The outbox sweep on the cron trigger (DESIGN.md, Outbox): deliveries written but never enqueued, or pending long
 * past their due time because their message was lost, go on the queue again. A duplicate is harmless: the consumer
 * claims a delivery before sending it. Each chunk is marked, then sent (see `markSwept`), and a chunk that fails is
 * logged and released without stopping the chunks after it. Answers how many deliveries were enqueued.
 */
export async function sweepOutbox(env: Env, now = Date.now()): Promise<number> {
  const db = database(env.DB);
  const ids = await deliveriesToSweep(db, now, SWEEP_LIMIT);
  let enqueued = 0;
  for (const chunk of queueBatches(ids)) {
    try {
      await markSwept(db, chunk, now);
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
      await releaseSwept(db, chunk).catch(() => {
        // D1 itself failed: the marked rows count as stuck after STUCK_AFTER_MS, and a later sweep takes them.
      });
    }
  }
  return enqueued;
}
