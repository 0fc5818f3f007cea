import { database } from "../db/client";
import { type AttemptOutcome, claimDelivery, recordAttempt } from "../domain/webhooks/deliveries";
import type { Env } from "../env";
import { type OutboundOutcome, type OutboundPolicy, outboundPolicy, signedPost } from "../lib/outbound";
import type { Clock } from "../lib/time";
import type { DeliveryMessage } from "./delivery-message";

/** Spec, Answering a delivery: "Answer with any 2xx within 10 seconds". */
export const ANSWER_TIMEOUT_MS = 10_000;

/** What tests drive instead of waiting: the clock, and the answer time (the spec's 10 s unless shortened). */
export type ConsumerOptions = { now?: Clock; answerTimeoutMs?: number };

/**
 * The queue consumer (DESIGN.md, Queue WEBHOOK_DELIVERIES), one delivery per message, as named steps:
 * claim → send signed (lib/outbound.ts: address check, POST, timeout) → record the attempt → ack, or retry after
 * the schedule's delay.
 */
export async function deliverWebhooks(
  batch: MessageBatch<DeliveryMessage>,
  env: Env,
  options: ConsumerOptions = {},
): Promise<void> {
  const policy = outboundPolicy(env);
  await Promise.all(batch.messages.map((message) => deliverOne(message, env.DB, policy, options)));
}

async function deliverOne(
  message: Message<DeliveryMessage>,
  d1: D1Database,
  policy: OutboundPolicy,
  { now = Date.now, answerTimeoutMs = ANSWER_TIMEOUT_MS }: ConsumerOptions,
): Promise<void> {
  const db = database(d1);
  const startedAt = now();
  const delivery = await claimDelivery(db, message.body.deliveryId, startedAt);
  if (!delivery) {
    // Delivered, failed, deleted with its endpoint, not yet due, or being attempted elsewhere: nothing to send.
    message.ack();
    return;
  }
  const outcome = await signedPost(policy, {
    kind: "Webhooks",
    url: delivery.url,
    body: delivery.envelope,
    // Spec, Delivery request: the event and the delivery id (the same for every attempt of one delivery).
    headers: { "X-Service-Event": delivery.event, "X-Service-Delivery": String(delivery.id) },
    secret: delivery.secret,
    unixSeconds: Math.floor(startedAt / 1000),
    timeoutMs: answerTimeoutMs,
  });
  const attempt = attemptOf(outcome, answerTimeoutMs, Math.max(0, now() - startedAt));
  const retryInSeconds = await recordAttempt(db, delivery, attempt, startedAt);
  if (retryInSeconds === undefined) message.ack();
  else message.retry({ delaySeconds: retryInSeconds });
}

/** The attempt as the endpoint's history shows it (spec: any 2xx is a success; a redirect is a failure). */
function attemptOf(outcome: OutboundOutcome, timeoutMs: number, durationMs: number): AttemptOutcome {
  const failure = (error: string, statusCode: number | null = null): AttemptOutcome => ({
    ok: false,
    statusCode,
    error,
    durationMs,
  });
  switch (outcome.kind) {
    case "delivered":
      return { ok: true, statusCode: outcome.status, error: null, durationMs };
    case "redirect":
      return failure("answered with a redirect, which is not followed", outcome.status);
    case "http_error":
    case "too_large":
    case "not_json":
      return failure(`answered HTTP ${outcome.status}`, outcome.status);
    case "timeout":
      return failure(`no answer within ${timeoutMs / 1000} seconds`);
    case "refused_address":
      return failure(outcome.reason);
    case "unresolved":
      return failure(`the host name could not be resolved: ${outcome.error}`);
    case "connection_failed":
      return failure(`the connection failed: ${outcome.error}`);
  }
}
