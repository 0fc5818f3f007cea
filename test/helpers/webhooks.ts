import { createMessageBatch } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { vi } from "vitest";
import { deliveryAttempts, webhookDeliveries } from "../../src/db/schema";
import type { ShardBindings } from "../../src/db/shard-bindings";
import type { ShardName } from "../../src/db/shards";
import type { Business } from "../../src/domain/access/businesses";
import { claimDeliveries } from "../../src/domain/webhooks/delivery-claim";
import { endpointsOf } from "../../src/domain/webhooks/endpoints";
import { type EventDraft, writeEvents } from "../../src/domain/webhooks/outbox/write";
import { deliverWebhooks } from "../../src/queues/deliver-webhooks";
import type { DeliveryMessage } from "../../src/queues/delivery-message";
import { deps, shardDependencies, testDependenciesOfShards } from "./dependencies";
import { DEFAULT_SHARD, shardDb } from "./fixtures";
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

/**
 * Writes events to the outbox without enqueueing them, so that a test runs the consumer itself; in the business's
 * shard (the legacy one unless said).
 */
export async function outboxOnly(business: Business, drafts: OpaqueDraft[], shard: ShardName = DEFAULT_SHARD) {
  const endpoints = await endpointsOf(shardDb(shard), business.id);
  return writeEvents(shardDependencies(shard), business, endpoints, opaque(drafts));
}

/** Runs the real consumer on one message for the delivery, at the given clock; answers what it did with it. */
export async function consume(deliveryId: number, now: number, options: { answerTimeoutMs?: number } = {}) {
  const [outcome] = await consumeBatch([deliveryId], now, options);
  if (!outcome) throw new Error("no message");
  return outcome;
}

/**
 * Runs the real consumer on one queue batch, a message per entry (an entry given twice is two messages): a delivery
 * id alone is a message of the fixtures' default shard; a message without a shard, as before sharding, is given as
 * `{ deliveryId }`. At the given clock and on the
 * test's bindings, some replaced (a counting or failing database); answers what it did with each message, in order.
 */
export async function consumeBatch(
  messages: Array<number | DeliveryMessage>,
  now: number,
  options: { answerTimeoutMs?: number; bindings?: Partial<ShardBindings> } = {},
) {
  const batch = createMessageBatch<DeliveryMessage>(
    "webhook-deliveries",
    messages.map((message, i) => {
      const body = typeof message === "number" ? { deliveryId: message, shard: DEFAULT_SHARD } : message;
      return { id: `msg-${body.deliveryId}-${now}-${i}`, timestamp: new Date(now), attempts: 1, body };
    }),
  );
  const spies = batch.messages.map((message) => ({
    ack: vi.spyOn(message, "ack"),
    retry: vi.spyOn(message, "retry"),
  }));
  await deliverWebhooks(batch, testDependenciesOfShards({ bindings: options.bindings, clock: () => now }), {
    answerTimeoutMs: options.answerTimeoutMs,
  });
  return spies.map(({ ack, retry }) => ({
    acked: ack.mock.calls.length === 1,
    retryDelay: retry.mock.calls[0]?.[0]?.delaySeconds,
  }));
}

/** A delivery's row in `shard`'s database: delivery ids are unique only within a shard. */
export async function deliveryRowIn(shard: ShardName, id: number) {
  return shardDb(shard).select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
}

export async function attemptsIn(shard: ShardName, id: number) {
  return shardDb(shard)
    .select()
    .from(deliveryAttempts)
    .where(eq(deliveryAttempts.deliveryId, id))
    .orderBy(deliveryAttempts.id);
}

/** A delivery's row, and its attempts, in the legacy shard. */
export const deliveryRow = (id: number) => deliveryRowIn(DEFAULT_SHARD, id);

export const attemptsOf = (id: number) => attemptsIn(DEFAULT_SHARD, id);

/** One delivery's claim, and nothing after it: what a consumer that dies right after claiming has done. */
export async function claimOne(deliveryId: number, now: number) {
  return (await claimDeliveries(deps, [deliveryId], now)).claimed.get(deliveryId);
}
