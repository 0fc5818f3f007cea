import { createMessageBatch, env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { vi } from "vitest";
import { deliveryAttempts, webhookDeliveries } from "../../src/db/schema";
import type { Business } from "../../src/domain/access/businesses";
import { endpointsOf } from "../../src/domain/webhooks/endpoints";
import { type EventDraft, writeEvents } from "../../src/domain/webhooks/events";
import { deliverWebhooks } from "../../src/queues/deliver-webhooks";
import type { DeliveryMessage } from "../../src/queues/delivery-message";
import { db } from "./fixtures";
import { call, json } from "./http";

export async function subscribe(apiKey: string, url: string, events?: string[]) {
  const response = await call("/api/v1/webhooks", { key: apiKey, method: "POST", body: { url, events } });
  if (response.status !== 201) throw new Error(`subscribe failed: ${response.status} ${await response.text()}`);
  return json<{ id: number; secret: string }>(response);
}

/** Writes events to the outbox without enqueueing them, so that a test runs the consumer itself. */
export async function outboxOnly(business: Business, drafts: EventDraft[]) {
  const endpoints = await endpointsOf(db, business.id);
  return writeEvents(db, business, endpoints, drafts);
}

/** Runs the real consumer on one message for the delivery, at the given clock; answers what it did with it. */
export async function consume(deliveryId: number, now: number, options: { answerTimeoutMs?: number } = {}) {
  const batch = createMessageBatch<DeliveryMessage>("webhook-deliveries", [
    { id: `msg-${deliveryId}-${now}`, timestamp: new Date(now), attempts: 1, body: { deliveryId } },
  ]);
  const [message] = batch.messages;
  if (!message) throw new Error("no message");
  const retry = vi.spyOn(message, "retry");
  const ack = vi.spyOn(message, "ack");
  await deliverWebhooks(batch, env, { now: () => now, ...options });
  return { acked: ack.mock.calls.length === 1, retryDelay: retry.mock.calls[0]?.[0]?.delaySeconds };
}

export async function deliveryRow(id: number) {
  return db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
}

export async function attemptsOf(id: number) {
  return db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, id)).orderBy(deliveryAttempts.id);
}
