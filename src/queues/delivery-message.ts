/** A webhook delivery message carries ids only: the consumer re-reads the delivery from D1 (DESIGN.md, Queue). */
export type DeliveryMessage = { deliveryId: number };

/** The producer binding of WEBHOOK_DELIVERIES: what the outbox enqueues through. */
export type DeliveryQueue = Queue<DeliveryMessage>;
