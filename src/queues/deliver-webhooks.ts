import { database } from "../db/client";
import { type AttemptOutcome, type ClaimedDelivery, claimDelivery, recordAttempt } from "../domain/webhooks/deliveries";
import type { Env } from "../env";
import { outboundPolicy, unreachableReason } from "../lib/public-address";
import { signatureHeader } from "../lib/signing";
import type { DeliveryMessage } from "./delivery-message";

/** Spec, Answering a delivery: "Answer with any 2xx within 10 seconds". */
export const ANSWER_TIMEOUT_MS = 10_000;

/**
 * The queue consumer (DESIGN.md, Queue WEBHOOK_DELIVERIES), one delivery per message, as named steps:
 * claim → check the address → send signed → record the attempt → ack, or retry after the schedule's delay.
 * `now` is the clock, so that tests drive time instead of sleeping.
 */
export async function deliverWebhooks(batch: MessageBatch<DeliveryMessage>, env: Env, now = Date.now): Promise<void> {
  await Promise.all(batch.messages.map((message) => deliverOne(message, env, now)));
}

async function deliverOne(message: Message<DeliveryMessage>, env: Env, now: () => number): Promise<void> {
  const db = database(env.DB);
  const startedAt = now();
  const delivery = await claimDelivery(db, message.body.deliveryId, startedAt);
  if (!delivery) {
    // Delivered, failed, deleted with its endpoint, not yet due, or being attempted elsewhere: nothing to send.
    message.ack();
    return;
  }
  const outcome = await attempt(delivery, env, startedAt, now);
  const retryInSeconds = await recordAttempt(db, delivery, outcome, startedAt);
  if (retryInSeconds === undefined) message.ack();
  else message.retry({ delaySeconds: retryInSeconds });
}

/** Spec, Delivery request: the headers, and a signature with a fresh timestamp for every attempt. */
function deliveryHeaders(delivery: ClaimedDelivery, env: Env, unixSeconds: number): Record<string, string> {
  return {
    "Content-Type": "application/json",
    "User-Agent": `${env.SERVICE_NAME}-Webhooks/1.0 (+${env.BASE_URL})`,
    "X-Service-Event": delivery.event,
    "X-Service-Delivery": String(delivery.id),
    "X-Service-Signature": signatureHeader(delivery.secret, delivery.envelope, unixSeconds),
  };
}

async function attempt(
  delivery: ClaimedDelivery,
  env: Env,
  startedAt: number,
  now: () => number,
): Promise<AttemptOutcome> {
  const failure = (error: string, statusCode: number | null = null): AttemptOutcome => ({
    ok: false,
    statusCode,
    error,
    durationMs: Math.max(0, now() - startedAt),
  });
  try {
    const refused = await unreachableReason(delivery.url, env.DOH_RESOLVER_URL, outboundPolicy(env));
    if (refused) return failure(refused);
  } catch (error) {
    return failure(`the host name could not be resolved: ${String(error)}`);
  }
  try {
    // redirect: "manual" — a redirect is a failure (spec), and cannot lead the request to a private address.
    const response = await fetch(delivery.url, {
      method: "POST",
      headers: deliveryHeaders(delivery, env, Math.floor(startedAt / 1000)),
      body: delivery.envelope,
      redirect: "manual",
      signal: AbortSignal.timeout(ANSWER_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (response.status >= 200 && response.status < 300) {
      return { ok: true, statusCode: response.status, error: null, durationMs: Math.max(0, now() - startedAt) };
    }
    if (response.status >= 300 && response.status < 400) {
      return failure("answered with a redirect, which is not followed", response.status);
    }
    return failure(`answered HTTP ${response.status}`, response.status);
  } catch (error) {
    if (error instanceof Error && error.name === "TimeoutError") {
      return failure(`no answer within ${ANSWER_TIMEOUT_MS / 1000} seconds`);
    }
    return failure(`the connection failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
