import type { Dependencies } from "../../../dependencies";

/* The outbox's second step (write.ts says the three): the delivery ids on the queue. */

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
 * (docs/architecture.md, Storage and state), in the shard the message names (src/queues/delivery-message.ts).
 */
export async function sendDeliveries(deps: Dependencies, ids: number[]): Promise<void> {
  await deps.queue.sendBatch(ids.map((deliveryId) => ({ body: { deliveryId, shard: deps.shard } })));
}

/**
 * Puts deliveries on the queue (ids only), chunk by chunk. Nothing here is thrown: the rows are already in the outbox,
 * so a failed send is left to the sweep on the cron trigger (docs/architecture.md, The outbox). Nothing is marked
 * after a send: the consumer's claim marks a delivery enqueued, so the request path writes to D1 once; a message still
 * waiting on the queue a minute later gets one more from the sweep, which the claim makes harmless. The caller's
 * answer (the report's 201) therefore never depends on the queue.
 */
export async function enqueueDeliveries(deps: Dependencies, deliveryIds: number[]): Promise<void> {
  for (const ids of queueBatches(deliveryIds)) {
    try {
      await sendDeliveries(deps, ids);
    } catch (error) {
      console.warn(
        JSON.stringify({
          level: "warn",
          message: "enqueue failed; the outbox sweep will retry",
          deliveries: ids.length,
          error: String(error),
        }),
      );
    }
  }
}
