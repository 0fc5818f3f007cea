import { LEGACY_SHARD, type ShardName } from "../db/shards";
import type { Dependencies, DependenciesOfShard } from "../dependencies";
import { MOVING_RETRY_AFTER_SECONDS } from "../domain/access/business-moving";
import { type Attempt, recordAttempts } from "../domain/webhooks/attempts";
import { type ClaimedDelivery, claimDeliveries, LEASE_MS } from "../domain/webhooks/delivery-claim";
import { logLine } from "../lib/log";
import { loggableError } from "../lib/loggable-error";
import { attempt } from "./delivery-attempt";
import type { DeliveryMessage } from "./delivery-message";

/** A receiver answers a 2xx within 10 seconds (docs/guides/webhooks.md, Answering, retries and the schedule). */
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

/** What tests drive instead of waiting: the clock, and the answer time (10 s unless shortened). */
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
 * One shard's messages in two D1 round trips, not two per delivery (docs/architecture.md, The outbox): claim every
 * delivery in one batch → send the claimed ones signed, concurrently → record every attempt in one batch → ack or retry
 * each message. A message is a delivery id: the row decides its attempt (`claimDeliveries`), the scheduled one when
 * due, else an extra one owed; only a scheduled attempt's message is retried, so no delivery has two schedules.
 */
async function deliverGroup(
  messages: Message<DeliveryMessage>[],
  deps: Dependencies,
  { answerTimeoutMs = ANSWER_TIMEOUT_MS }: ConsumerOptions,
): Promise<void> {
  const now = deps.clock;
  const startedAt = now();
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
  logBatch(deps, messages.length, attempts, now() - startedAt);
  // Ack or retry, each message by its own delivery's outcome.
  sends.forEach(({ message }, i) => {
    const delaySeconds = retryDelays[i];
    if (delaySeconds === undefined) message.ack();
    else message.retry({ delaySeconds });
  });
}

/**
 * The group's one line (docs/operations.md, Reading the logs): how many attempts it made and how many delivered, of
 * its messages. An attempt that did not deliver has a line of its own (`attempt`); one that delivered is counted
 * here only, since its row in D1 is its record: a line per delivery would cost more in Workers Logs than the rest of
 * the service's lines together, and locally about a fifth of the consumer's CPU (docs/performance.md).
 */
function logBatch(deps: Dependencies, messages: number, attempts: Attempt[], durationMs: number) {
  logLine("delivery_batch", {
    shard: deps.shard,
    messages,
    attempts: attempts.length,
    delivered: attempts.filter(({ outcome }) => outcome.ok).length,
    durationMs,
    slowestMs: Math.max(0, ...attempts.map(({ outcome }) => outcome.durationMs)),
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
