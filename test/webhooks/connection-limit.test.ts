import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { OPEN_CONNECTIONS } from "../../src/lib/connection-slots";
import { createBusiness } from "../helpers/fixtures";
import { attemptsOf, consumeBatch, outboxOnly, subscribe } from "../helpers/webhooks";

// docs/architecture.md, Outbound calls: production lets one invocation wait on 6 outbound connections at once, and
// `wrangler dev` does not. The consumer keeps the limit itself, and times each request from the moment it has a
// connection, so receivers that hang delay the batch's other deliveries but never make them time out. The receiver
// counts the connections open at once across every endpoint of the group.

const ANSWER_TIMEOUT_MS = 1_000;

describe(`a batch's outbound connections, at most ${OPEN_CONNECTIONS} at once`, () => {
  it("sends 100 deliveries with 6 receivers hanging past the timeout: no false timeout, every healthy one delivered on its first attempt", {
    timeout: 30_000,
  }, async () => {
    const { business, apiKey } = await createBusiness();
    const group = `connections-${crypto.randomUUID()}`;
    const url = (box: string, path: string) => `${env.RECEIVER_URL}/${group}~${box}${path}`;
    const hanging = await Promise.all(
      Array.from({ length: 6 }, (_, n) => subscribe(apiKey, url(`hang${n}`, `/delay/${ANSWER_TIMEOUT_MS * 3}`))),
    );
    const healthy = await Promise.all(
      Array.from({ length: 14 }, (_, n) => subscribe(apiKey, url(`ok${n}`, "/delay/50"))),
    );
    // One delivery each to the hanging endpoints, first in the batch, and 94 spread over the healthy ones.
    const draft = (endpointId: number) => ({ event: "booking.created" as const, data: { n: endpointId }, endpointId });
    const endpoints = [...hanging, ...Array.from({ length: 94 }, (_, n) => healthy[n % healthy.length])];
    const { deliveryIds } = await outboxOnly(
      business,
      endpoints.map((endpoint) => draft(endpoint?.id ?? 0)),
    );
    expect(deliveryIds).toHaveLength(100);

    const started = Date.now();
    await consumeBatch(deliveryIds, started, { answerTimeoutMs: ANSWER_TIMEOUT_MS });
    const took = Date.now() - started;

    const counted = (await (await fetch(`${env.RECEIVER_URL}/__connections/${group}`)).json()) as { max: number };
    expect(counted.max).toBeLessThanOrEqual(OPEN_CONNECTIONS);
    expect(counted.max).toBeGreaterThan(1);
    const outcomes = await Promise.all(deliveryIds.map(async (id) => (await attemptsOf(id))[0]));
    const [hung, rest] = [outcomes.slice(0, 6), outcomes.slice(6)];
    expect(hung.map((attempt) => attempt?.error)).toEqual(
      Array(6).fill(`no answer within ${ANSWER_TIMEOUT_MS / 1000} seconds`),
    );
    expect(rest.every((attempt) => attempt?.statusCode === 200 && attempt.error === null)).toBe(true);
    // The hanging ones hold their connections for one timeout; the 94 others then go 6 at a time, 50 ms each.
    expect(took).toBeLessThan(ANSWER_TIMEOUT_MS + 94 * 100);
  });
});
