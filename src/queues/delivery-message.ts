import type { ShardName } from "../db/shards";

/**
 * A webhook delivery message carries ids only: the consumer re-reads the delivery from D1 (docs/webhooks.md). That
 * holds for the attempt a partner asks for outside the retry schedule too (redeliver, recover): what is owed is
 * written on the delivery's row (`extra_attempt_at`), so that the outbox sweep can send a lost message again, and any
 * message of the delivery, a duplicate included, makes it (src/domain/webhooks/delivery-claim.ts, `claimDeliveries`).
 */
export type DeliveryMessage = {
  deliveryId: number;
  /**
   * The shard whose database holds the delivery: ids are unique only within a shard (docs/scaling.md, The queue, the
   * consumer and the cron). A message sent before sharding names none: its delivery is in the legacy shard.
   */
  shard?: ShardName;
};

/** The producer binding of WEBHOOK_DELIVERIES: what the outbox enqueues through. */
export type DeliveryQueue = Queue<DeliveryMessage>;
