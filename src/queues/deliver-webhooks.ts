import { LEGACY_SHARD, type ShardName } from "../db/shards";
import type { Dependencies, DependenciesOfShard } from "../dependencies";
import { MOVING_RETRY_AFTER_SECONDS } from "../domain/access/business-moving";
import { type Attempt, type AttemptOutcome, recordAttempts } from "../domain/webhooks/attempts";
import { type ClaimedDelivery, claimDeliveries, LEASE_MS } from "../domain/webhooks/delivery-claim";
import { isListenerUrl } from "../domain/webhooks/listener-endpoints";
import { signingSecrets } from "../domain/webhooks/secret-rotation";
import { logLine } from "../lib/log";
import { loggableError } from "../lib/loggable-error";
import { type OutboundOutcome, type SignedPost, signedPost } from "../lib/outbound";
import type { Clock } from "../lib/time";
import type { DeliveryMessage } from "./delivery-message";
import { relayToListener } from "./listener-relay";

/** Spec, Answering a delivery: "Answer with any 2xx within 10 seconds". */
export const ANSWER_TIMEOUT_MS = 10_000;

/**
 * After a failed record, the messages come back once the leases taken at the claim have run out: sooner, the claim
 * would find them leased, ack, and leave the deliveries to the sweep 15 minutes later.
 */
const RETRY_AFTER_UNRECORDED_SECONDS = LEASE_MS / 1000;

/**
 * After a failed claim, the messages come back in half a minute: at once, a database that just failed would be asked
 * again within seconds and the messages' retries (wrangler.toml, max_retries) spent before it recovers. The queue's
 * `retry_delay` is the same, for the retries of an invocation that threw.
 */
export const RETRY_AFTER_FAILED_CLAIM_SECONDS = 30;

/** What tests drive instead of waiting: the clock, and the answer time (the spec's 10 s unless shortened). */
export type ConsumerOptions = { answerTimeoutMs?: number };

type Send = { message: Message<DeliveryMessage>; delivery: ClaimedDelivery };

/**
 * The consumer of WEBHOOK_DELIVERIES (docs/architecture.md, The outbox), one delivery per message. A batch mixes the
 * shards (docs/scaling.md, The queue, the consumer and the cron): its messages are grouped by the shard they name, and
 * each group is delivered in its shard, on that shard's dependencies, built once per group by `dependenciesOf`. The
 * groups run side by side and apart: a shard whose database fails leaves its own messages to be retried, and every
 * other group's are acked or retried by their own outcome.
 */
export async function deliverWebhooks(
  batch: MessageBatch<DeliveryMessage>,
  dependenciesOf: DependenciesOfShard,
  options: ConsumerOptions = {},
): Promise<void> {
  const groups = await Promise.allSettled(
    [...messagesByShard(batch.messages)].map(([shard, messages]) =>
      deliverGroup(messages, dependenciesOf(shard), options),
    ),
  );
  // A failure no step expected still fails the invocation, once every group is done: the runtime then retries only
  // the messages left without an ack or a retry.
  for (const group of groups) if (group.status === "rejected") throw group.reason;
}

/** The batch's messages by the shard they name; a message that names none is the legacy shard's. */
function messagesByShard(messages: readonly Message<DeliveryMessage>[]) {
  const groups = new Map<ShardName, Message<DeliveryMessage>[]>();
  for (const message of messages) {
    const shard = message.body.shard ?? LEGACY_SHARD;
    const group = groups.get(shard);
    if (group) group.push(message);
    else groups.set(shard, [message]);
  }
  return groups;
}

/**
 * One shard's messages, in two D1 round trips, not two per delivery (docs/architecture.md, Performance budget), as
 * named steps: claim every message's delivery in one D1 batch → send the claimed ones signed, concurrently
 * (lib/outbound.ts: address check, POST, timeout) → record every attempt in one D1 batch → ack each message, or
 * retry it after its delivery's delay of the schedule.
 *
 * A message is a delivery id and nothing more, whatever it is sent for: the attempt it makes is decided by the row
 * (src/domain/webhooks/delivery-claim.ts, `claimDeliveries`): the scheduled one when it is due, else the extra one a
 * partner asked for (redeliver, recover), if one is owed. Only a scheduled attempt's message is retried on the
 * schedule; the message of an extra attempt is acked, so that a delivery never has two schedules.
 */
async function deliverGroup(
  messages: Message<DeliveryMessage>[],
  deps: Dependencies,
  { answerTimeoutMs = ANSWER_TIMEOUT_MS }: ConsumerOptions,
): Promise<void> {
  const now = deps.clock;
  // Claim: D1 round trip 1.
  let claimed: Map<number, ClaimedDelivery>;
  let held: Set<number>;
  try {
    ({ claimed, held } = await claimDeliveries(
      deps,
      messages.map((message) => message.body.deliveryId),
      now(),
    ));
  } catch (error) {
    // Nothing of the group is claimed (one transaction): its messages come back after a pause, not at once.
    logFailedStep(deps, "claim deliveries", messages.length, error, RETRY_AFTER_FAILED_CLAIM_SECONDS);
    for (const message of messages) message.retry({ delaySeconds: RETRY_AFTER_FAILED_CLAIM_SECONDS });
    return;
  }
  const sends = sendsOf(messages, claimed, held);
  // Send: no D1 at all, so a slow receiver holds up only the group's record, never another delivery's POST.
  const attempts = await Promise.all(sends.map(({ delivery }) => attempt(delivery, deps, now, answerTimeoutMs)));
  // Record: D1 round trip 2.
  let retryDelays: Array<number | undefined>;
  try {
    retryDelays = await recordAttempts(deps, attempts);
  } catch (error) {
    // Nothing of the group is recorded (one transaction): every delivery is still pending, under its lease.
    logFailedStep(deps, "record delivery attempts", sends.length, error, RETRY_AFTER_UNRECORDED_SECONDS);
    for (const { message } of sends) message.retry({ delaySeconds: RETRY_AFTER_UNRECORDED_SECONDS });
    return;
  }
  // Ack or retry, each message by its own delivery's outcome.
  sends.forEach(({ message }, i) => {
    const delaySeconds = retryDelays[i];
    if (delaySeconds === undefined) message.ack();
    else message.retry({ delaySeconds });
  });
}

/** A D1 step of a group that failed: one error line, with the shard and how many deliveries it left to a retry. */
function logFailedStep(deps: Dependencies, step: string, deliveries: number, error: unknown, retryInSeconds?: number) {
  console.error(
    JSON.stringify({
      level: "error",
      shard: deps.shard,
      step,
      deliveries,
      retryInSeconds,
      ...loggableError(error as Error),
    }),
  );
}

/**
 * The messages to send: the first message of each claimed delivery. A delivery held back because its business is
 * being moved comes back after the move's retry time: by then the move has ended, and the message finds the delivery
 * here again (an aborted move) or nothing (the new shard's sweep sends the copy). Every other one is acked now, as it
 * sends nothing: a duplicate within the batch, or a delivery delivered, failed, deleted with its endpoint, not yet due,
 * or being attempted elsewhere.
 */
function sendsOf(
  messages: readonly Message<DeliveryMessage>[],
  claimed: Map<number, ClaimedDelivery>,
  held: Set<number>,
): Send[] {
  const sends: Send[] = [];
  const sending = new Set<number>();
  for (const message of messages) {
    const delivery = claimed.get(message.body.deliveryId);
    if (delivery && !sending.has(delivery.id)) {
      sending.add(delivery.id);
      sends.push({ message, delivery });
    } else if (held.has(message.body.deliveryId)) message.retry({ delaySeconds: MOVING_RETRY_AFTER_SECONDS });
    else message.ack();
  }
  return sends;
}

/**
 * One signed POST, timed on its own, as the attempt the history shows; for a listening session's endpoint, the same
 * request relayed through its socket (docs/decisions.md, Listening from a laptop).
 */
async function attempt(
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
    // Spec, Delivery request: the event and the delivery id (the same for every attempt of one delivery).
    headers: { "X-Service-Event": delivery.event, "X-Service-Delivery": String(delivery.id) },
    // `webhook-id` (docs/webhooks.md, The request): the envelope's `evt_` id, the same for every attempt.
    webhookId: delivery.eventId,
    // During a rotation, the endpoint's previous secret signs too, until it expires at the consumer's clock.
    secrets: signingSecrets(delivery, attemptedAt),
    unixSeconds: Math.floor(attemptedAt / 1000),
    timeoutMs: answerTimeoutMs,
    // The start of the receiver's answer, for the owner's delivery history (docs/decisions.md, The owner's dashboard).
    keepExcerpt: true,
  };
  const outcome = isListenerUrl(delivery.url)
    ? await relayToListener(deps, call, delivery)
    : await signedPost(deps.outbound, call);
  const recorded = attemptOf(outcome, answerTimeoutMs, Math.max(0, now() - attemptedAt));
  // One line per attempt, of ids and the outcome's kind, never the URL or the error text (docs/operations.md, Reading
  // the logs).
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

/** The attempt as the endpoint's history shows it (spec: any 2xx is a success; a redirect is a failure). */
function attemptOf(outcome: OutboundOutcome, timeoutMs: number, durationMs: number): AttemptOutcome {
  // Only an answer has an excerpt: never a refused or unresolved address, a timeout or a failed connection.
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
      return { ok: true, statusCode: outcome.status, error: null, durationMs, excerpt };
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
