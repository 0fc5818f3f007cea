import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { OPEN_CONNECTIONS } from "../../src/lib/connection-slots";
import { createBusiness } from "../helpers/fixtures";
import { attemptsOf, consumeBatch, outboxOnly, subscribe } from "../helpers/webhooks";

// docs/architecture.md, Outbound calls: production lets one invocation wait on 6 outbound connections for their
// answer's headers at once, and `wrangler dev` does not. The consumer keeps the limit itself, and times each request
// from the moment it has a slot, so slow or hanging receivers delay the batch's other deliveries but never make them
// time out; an answer whose headers are in holds no slot while its body comes. The receiver counts the requests
// waiting for headers (and those open) at once across every endpoint of the group. (Hanging receivers come last: a
// connection the Worker gave up on reaches the receiver's count a moment after the Worker has freed it.)

const ANSWER_TIMEOUT_MS = 1_000;

describe(`a batch's outbound connections, at most ${OPEN_CONNECTIONS} at once`, () => {
  it("sends 100 deliveries behind 6 slow receivers and before 6 hanging ones: no false timeout, at most 6 open at once", {
    timeout: 30_000,
  }, async () => {
    const { group, endpointsOf, deliveriesTo } = await receiverGroup("connections");
    // Slow ones hold all 6 connections for most of a timeout: whatever waits behind them would time out if its
    // timeout had started with the batch. Hanging ones come last, so that their timeouts end the batch.
    const slow = await endpointsOf(6, "slow", `/delay/${ANSWER_TIMEOUT_MS * 0.8}`);
    const healthy = await endpointsOf(8, "ok", "/delay/50");
    const hanging = await endpointsOf(6, "hang", `/delay/${ANSWER_TIMEOUT_MS * 3}`);
    const order = [...slow, ...Array.from({ length: 88 }, (_, n) => healthy[n % healthy.length]), ...hanging];
    const deliveryIds = await deliveriesTo(order);
    expect(deliveryIds).toHaveLength(100);

    const started = Date.now();
    await consumeBatch(deliveryIds, started, { answerTimeoutMs: ANSWER_TIMEOUT_MS });
    const took = Date.now() - started;

    const counted = await connectionsOf(group);
    expect(counted.maxWaiting).toBe(OPEN_CONNECTIONS);
    const outcomes = await Promise.all(deliveryIds.map(async (id) => (await attemptsOf(id))[0]));
    const answered = outcomes.slice(0, 94);
    expect(answered.every((attempt) => attempt?.statusCode === 200 && attempt.error === null)).toBe(true);
    expect(outcomes.slice(94).map((attempt) => attempt?.error)).toEqual(
      Array(6).fill(`no answer within ${ANSWER_TIMEOUT_MS / 1000} seconds`),
    );
    // The slow ones' 0.8 of a timeout, the 88 others 6 at a time at 50 ms, then one timeout for the hanging ones.
    expect(took).toBeLessThan(ANSWER_TIMEOUT_MS * 0.8 + 88 * 100 + ANSWER_TIMEOUT_MS);
  });

  it("gives a slot back when the headers arrive: 6 failed answers whose bodies take 0.8 s hold none meanwhile", {
    timeout: 30_000,
  }, async () => {
    const { group, endpointsOf, deliveriesTo } = await receiverGroup("bodies");
    // A failed answer's body is read for its excerpt; a 2xx is dropped unread and would prove nothing here.
    const slowBodies = await endpointsOf(6, "slow-body", `/slow-body/${ANSWER_TIMEOUT_MS * 0.8}/503`);
    const healthy = await endpointsOf(8, "ok", "/delay/5");
    const order = [...slowBodies, ...Array.from({ length: 94 }, (_, n) => healthy[n % healthy.length])];
    const deliveryIds = await deliveriesTo(order);

    await consumeBatch(deliveryIds, Date.now(), { answerTimeoutMs: ANSWER_TIMEOUT_MS });

    const counted = await connectionsOf(group);
    expect(counted.maxWaiting).toBeLessThanOrEqual(OPEN_CONNECTIONS);
    // Held to its body, each slow answer would have kept its slot and the 94 would have waited behind all six.
    expect(counted.max).toBeGreaterThan(OPEN_CONNECTIONS);
    const outcomes = await Promise.all(deliveryIds.map(async (id) => (await attemptsOf(id))[0]));
    expect(outcomes.slice(6).every((attempt) => attempt?.statusCode === 200 && attempt.error === null)).toBe(true);
    // The slow bodies are read within the answer time, and their start is the excerpt the owner sees.
    expect(outcomes.slice(0, 6).map((attempt) => [attempt?.statusCode, attempt?.answerExcerpt])).toEqual(
      Array(6).fill([503, '{"ok":false}']),
    );
  });
});

/**
 * A business whose endpoints are boxes of one receiver group (`<group>~<box>`), counted together: `endpointsOf` adds
 * `count` of them answering as `path` asks, and `deliveriesTo` writes one delivery to each endpoint of a list, in its
 * order, as the outbox writes them.
 */
async function receiverGroup(name: string) {
  const { business, apiKey } = await createBusiness();
  const group = `${name}-${crypto.randomUUID()}`;
  const url = (box: string, path: string) => `${env.RECEIVER_URL}/${group}~${box}${path}`;
  const endpointsOf = (count: number, box: string, path: string) =>
    Promise.all(Array.from({ length: count }, (_, n) => subscribe(apiKey, url(`${box}${n}`, path))));
  const deliveriesTo = async (endpoints: Array<{ id: number } | undefined>) => {
    const drafts = endpoints.map((endpoint) => ({
      event: "booking.created" as const,
      data: {},
      endpointId: endpoint?.id ?? 0,
    }));
    return (await outboxOnly(business, drafts)).deliveryIds;
  };
  return { group, endpointsOf, deliveriesTo };
}

/** What the receiver counted of a group's requests: open at once, and waiting for their answer's headers at once. */
async function connectionsOf(group: string) {
  const answer = await fetch(`${env.RECEIVER_URL}/__connections/${group}`);
  return (await answer.json()) as { max: number; maxWaiting: number };
}
