import { chunks } from "../db/batches";
import { database } from "../db/client";
import { deliveriesToSweep, markSwept } from "../domain/webhook-deliveries";
import type { Env } from "../env";

/** How many deliveries one run of the sweep enqueues at most; the next minute takes the rest. */
const SWEEP_LIMIT = 500;

/**
 * The outbox sweep on the cron trigger (DESIGN.md, Outbox): deliveries written but never enqueued, or pending long
 * past their due time because their message was lost, go on the queue again. A duplicate is harmless: the consumer
 * claims a delivery before sending it.
 */
export async function sweepOutbox(env: Env, now = Date.now()): Promise<number> {
  const db = database(env.DB);
  const ids = await deliveriesToSweep(db, now, SWEEP_LIMIT);
  for (const batch of chunks(ids, 100)) {
    await env.WEBHOOK_DELIVERIES.sendBatch(batch.map((deliveryId) => ({ body: { deliveryId } })));
    await markSwept(db, batch, now);
  }
  return ids.length;
}
