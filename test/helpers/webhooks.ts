import { createMessageBatch } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { vi } from "vitest";
import { database } from "../../src/db/client";
import { deliveryAttempts, webhookDeliveries } from "../../src/db/schema";
import type { Business } from "../../src/domain/access/businesses";
import { claimDeliveries } from "../../src/domain/webhooks/delivery-claim";
import { endpointsOf } from "../../src/domain/webhooks/endpoints";
import { type EventDraft, writeEvents } from "../../src/domain/webhooks/outbox/write";
import { deliverWebhooks } from "../../src/queues/deliver-webhooks";
import type { DeliveryMessage } from "../../src/queues/delivery-message";
import { deps, testDependencies } from "./dependencies";
import { db } from "./fixtures";
import { call, json } from "./http";

export async function subscribe(apiKey: string, url: string, events?: string[]) {
  const response = await call("/api/v1/webhooks", { key: apiKey, method: "POST", body: { url, events } });
  if (response.status !== 201) throw new Error(`subscribe failed: ${response.status} ${await response.text()}`);
  return json<{ id: number; secret: string }>(response);
}

/**
 * A draft whose `data` the test leaves opaque: the outbox stores and sends `data` as it is, whatever the event, and
 * a test of the pipeline needs no real data. The one place data is not checked against its event's schema
 * (src/domain/webhooks/event-draft.ts).
 */
export type OpaqueDraft = Omit<EventDraft, "data" | "dataFromSql"> & { data: Record<string, unknown> };
export const opaque = (drafts: OpaqueDraft[]) => drafts as EventDraft[];

/** Writes events to the outbox without enqueueing them, so that a test runs the consumer itself. */
export async function outboxOnly(business: Business, drafts: OpaqueDraft[]) {
  const endpoints = await endpointsOf(db, business.id);
  return writeEvents(deps, business, endpoints, opaque(drafts));
}

/** Runs the real consumer on one message for the delivery, at the given clock; answers what it did with it. */
export async function consume(deliveryId: number, now: number, options: { answerTimeoutMs?: number } = {}) {
  const [outcome] = await consumeBatch([deliveryId], now, options);
  if (!outcome) throw new Error("no message");
  return outcome;
}

/**
 * Runs the real consumer on one queue batch, a message per delivery id (an id given twice is two messages), at the
 * given clock and on the given bindings; answers what it did with each message, in order.
 */
export async function consumeBatch(
  deliveryIds: number[],
  now: number,
  options: { answerTimeoutMs?: number; d1?: D1Database } = {},
) {
  const batch = createMessageBatch<DeliveryMessage>(
    "webhook-deliveries",
    deliveryIds.map((deliveryId, i) => ({
      id: `msg-${deliveryId}-${now}-${i}`,
      timestamp: new Date(now),
      attempts: 1,
      body: { deliveryId },
    })),
  );
  const spies = batch.messages.map((message) => ({
    ack: vi.spyOn(message, "ack"),
    retry: vi.spyOn(message, "retry"),
  }));
  const parts = options.d1 ? { db: database(options.d1) } : {};
  await deliverWebhooks(batch, testDependencies({ ...parts, clock: () => now }), {
    answerTimeoutMs: options.answerTimeoutMs,
  });
  return spies.map(({ ack, retry }) => ({
    acked: ack.mock.calls.length === 1,
    retryDelay: retry.mock.calls[0]?.[0]?.delaySeconds,
  }));
}

export async function deliveryRow(id: number) {
  return db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
}

export async function attemptsOf(id: number) {
  return db.select().from(deliveryAttempts).where(eq(deliveryAttempts.deliveryId, id)).orderBy(deliveryAttempts.id);
}

/** One delivery's claim, and nothing after it: what a consumer that dies right after claiming has done. */
export async function claimOne(deliveryId: number, now: number) {
  return (await claimDeliveries(deps, [deliveryId], now)).get(deliveryId);
}
