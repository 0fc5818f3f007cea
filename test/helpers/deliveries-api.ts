import { inArray } from "drizzle-orm";
import { expect } from "vitest";
import { webhookDeliveries } from "../../src/db/schema";
import type { Business } from "../../src/domain/access/businesses";
import { RETRY_DELAYS_SECONDS } from "../../src/domain/webhooks/attempts";
import type { DeliveryMessage } from "../../src/queues/delivery-message";
import { db } from "./fixtures";
import { call, json } from "./http";
import { consumeBatch, deliveryRow, outboxOnly } from "./webhooks";

// The deliveries of one endpoint (GET .../deliveries, redeliver, recover) as the files of test/webhooks/deliveries-*
// call them, and the consumer driven through every attempt.

export const HOUR = 3_600_000;

export type Attempt = { attempted_at: string; status_code: number | null; error: string | null; duration_ms: number };
export type Delivery = {
  id: number;
  event_id: string;
  event: string;
  status: "pending" | "delivered" | "failed";
  attempts: Attempt[];
  next_attempt_at: string | null;
  created_at: string;
};
export type Page = { data: Delivery[]; has_more: boolean };

export const ENDPOINT_NOT_FOUND = "No webhook endpoint with that id exists for this business.";
export const DELIVERY_NOT_FOUND = "No delivery with that id exists for this webhook endpoint.";
export const DISABLED = "The webhook endpoint is disabled: nothing is sent to it until it is enabled again.";

export const deliveriesPath = (endpointId: number | string, query = "") =>
  `/api/v1/webhooks/${endpointId}/deliveries${query}`;
export const redeliverPath = (endpointId: number | string, deliveryId: number | string) =>
  `/api/v1/webhooks/${endpointId}/deliveries/${deliveryId}/redeliver`;
export const recoverPath = (endpointId: number | string) => `/api/v1/webhooks/${endpointId}/recover`;

export async function listDeliveries(key: string, endpointId: number, query = "") {
  const response = await call(deliveriesPath(endpointId, query), { key });
  await expect(response).toHaveStatus(200);
  return json<Page>(response);
}
export const redeliver = (key: string, endpointId: number | string, deliveryId: number | string) =>
  call(redeliverPath(endpointId, deliveryId), { key, method: "POST" });
export const recover = (key: string, endpointId: number | string, since: unknown) =>
  call(recoverPath(endpointId), { key, method: "POST", body: { since } });
export const iso = (at: number) => new Date(at).toISOString();

/** Deliveries of `count` new events to that one endpoint, in the outbox and not enqueued: the test drives the consumer. */
export async function deliveriesTo(business: Business, endpointId: number, count: number) {
  const drafts = Array.from({ length: count }, (_, n) => ({ event: "lead.created" as const, data: { n }, endpointId }));
  const { emitted, deliveryIds } = await outboxOnly(business, drafts);
  return { eventIds: emitted.map((event) => event.id), deliveryIds };
}

/** The deliveries (and their events) as if written at `at`, and due then. */
export async function happenedAt(deliveryIds: number[], at: number) {
  await db
    .update(webhookDeliveries)
    .set({ createdAt: iso(at), nextAttemptAt: iso(at) })
    .where(inArray(webhookDeliveries.id, deliveryIds));
}

/** The real consumer through all six attempts of each delivery, from `start`, each failing: they end failed. */
export async function failAllAttempts(deliveryIds: number[], start: number) {
  let at = start;
  for (const delay of [...RETRY_DELAYS_SECONDS, undefined]) {
    const outcomes = await consumeBatch(deliveryIds, at);
    expect(outcomes.map((outcome) => outcome.retryDelay)).toEqual(deliveryIds.map(() => delay));
    at += (delay ?? 0) * 1000;
  }
  for (const id of deliveryIds) expect((await deliveryRow(id))?.status).toBe("failed");
  return at;
}

/**
 * A queue binding that keeps what it is given: the enqueue of a large recover, without 3,000 real sends. Each send
 * takes a turn of the event loop, as the real one's I/O does.
 */
export function recordingQueue() {
  const batches: number[][] = [];
  const queue = {
    send: async () => {},
    sendBatch: async (messages: Iterable<MessageSendRequest<DeliveryMessage>>) => {
      await new Promise((resolve) => setTimeout(resolve, 0));
      batches.push([...messages].map((message) => message.body.deliveryId));
    },
  };
  return { batches, queue: queue as unknown as Queue<DeliveryMessage> };
}
