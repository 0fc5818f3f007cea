import type { DeliveryMessage } from "../../src/queues/delivery-message";

/**
 * A queue binding that takes messages and sends nothing: the deliveries a request writes stay pending with their
 * message sent, and no consumer touches them while the test reads or moves their rows.
 */
export const keepingQueue = {
  send: async () => {},
  sendBatch: async (_messages: Iterable<MessageSendRequest<DeliveryMessage>>) => {},
} as unknown as Queue<DeliveryMessage>;
