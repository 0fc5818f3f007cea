/** A webhook delivery message carries ids only: the consumer re-reads the delivery from D1 (DESIGN.md, Queue). */
export type DeliveryMessage = { deliveryId: number };
