import type { Dependencies } from "../dependencies";
import type { Attempt, AttemptOutcome } from "../domain/webhooks/attempts";
import type { ClaimedDelivery } from "../domain/webhooks/delivery-claim";
import { isListenerUrl } from "../domain/webhooks/listener-endpoints";
import { signingSecrets } from "../domain/webhooks/secret-rotation";
import { logLine } from "../lib/log";
import { type OutboundOutcome, type SignedPost, signedPost } from "../lib/outbound";
import type { Clock } from "../lib/time";
import { relayToListener } from "./listener-relay";

/**
 * One signed POST, timed on its own, as the attempt the history shows; for a listening session's endpoint, the same
 * request relayed through its socket (docs/decisions.md, Listening from a laptop).
 */
export async function attempt(
  delivery: ClaimedDelivery,
  deps: Pick<Dependencies, "outbound" | "listener" | "shard">,
  now: Clock,
  answerTimeoutMs: number,
): Promise<Attempt> {
  const attemptedAt = now();
  const call: SignedPost = {
    kind: "Webhooks",
    url: delivery.url,
    body: delivery.envelope,
    // The event, and the delivery id, the same for every attempt of one delivery (docs/webhooks.md, The request).
    headers: { "X-Service-Event": delivery.event, "X-Service-Delivery": String(delivery.id) },
    // `webhook-id` (docs/webhooks.md, The request): the envelope's `evt_` id, the same for every attempt.
    webhookId: delivery.eventId,
    // During a rotation, the endpoint's previous secret signs too, until it expires at the consumer's clock.
    secrets: signingSecrets(delivery, attemptedAt),
    unixSeconds: Math.floor(attemptedAt / 1000),
    timeoutMs: answerTimeoutMs,
    // The start of a failed answer, for the owner's delivery history (docs/decisions.md, The owner's dashboard).
    keepExcerpt: true,
  };
  const outcome = isListenerUrl(delivery.url)
    ? await relayToListener(deps, call, delivery)
    : await signedPost(deps.outbound, call);
  const recorded = attemptOf(outcome, answerTimeoutMs, Math.max(0, now() - attemptedAt));
  // One line per attempt that did not deliver, of ids and the outcome's kind, never the URL or the error text
  // (docs/operations.md, Reading the logs); one that delivered is counted in its group's line.
  if (!recorded.ok)
    logLine("delivery_attempt", {
      deliveryId: delivery.id,
      endpointId: delivery.endpointId,
      eventId: delivery.eventId,
      // The attempt's number on the schedule; 0 for the one attempt asked for outside it (redeliver, recover).
      attempt: delivery.kind === "extra" ? 0 : delivery.attemptCount + 1,
      ok: recorded.ok,
      statusCode: recorded.statusCode,
      outcome: outcome.kind,
      durationMs: recorded.durationMs,
    });
  return { delivery, attemptedAt, outcome: recorded };
}

/**
 * The attempt as the endpoint's history shows it: any 2xx succeeds, a redirect fails (docs/webhooks.md, The request).
 */
function attemptOf(outcome: OutboundOutcome, timeoutMs: number, durationMs: number): AttemptOutcome {
  // Only a failed answer has an excerpt: never a 2xx, a refused or unresolved address, a timeout or a failed connection.
  const excerpt = "excerpt" in outcome ? (outcome.excerpt ?? null) : null;
  const failure = (error: string, statusCode: number | null = null): AttemptOutcome => ({
    ok: false,
    statusCode,
    error,
    durationMs,
    excerpt,
  });
  switch (outcome.kind) {
    case "delivered":
      return { ok: true, statusCode: outcome.status, error: null, durationMs, excerpt: null };
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
