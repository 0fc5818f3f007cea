import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { REQUESTS_PER_MINUTE } from "../../src/admission/partner-admission";
import { PUSHES_PER_HOUR } from "../../src/domain/knowledge/registration";
import { SENDS_PER_HOUR, TEST_EVENTS_PER_HOUR } from "../../src/domain/webhooks/endpoint-budgets";
import { createBusiness } from "../helpers/fixtures";
import { call, expectError } from "../helpers/http";
import { receiverBox } from "../helpers/receiver";
import { subscribe } from "../helpers/webhooks";

/*
 * docs/rate-limits.md: the RateLimit fields of draft-ietf-httpapi-ratelimit-headers-10. One consistent set per answer:
 * `RateLimit-Policy` names every policy the request was counted against, the request budget's first; `RateLimit` says
 * what is left of each whose remainder is known; the older drafts' fields are gone.
 */

const REQUESTS = `"requests";q=${REQUESTS_PER_MINUTE};w=60`;
const PUSHES = `"knowledge_pushes";q=${PUSHES_PER_HOUR};w=3600`;
const OLD_FIELDS = ["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"];

/** `"name";r=<remaining>;t=<seconds>`, split into its parts. */
function standing(field: string | null) {
  return [...(field ?? "").matchAll(/"([a-z_]+)";r=(\d+);t=(\d+)/g)].map(([, policy, r, t]) => ({
    policy,
    remaining: Number(r),
    resetInSeconds: Number(t),
  }));
}

const knowledge = { title: "Holiday hours", content: "Closed from 24 to 26 December, open again on the 27th." };

describe("the RateLimit fields of every answer", () => {
  it("name only the request budget on a read, and state no remainder the service does not know", async () => {
    const { apiKey } = await createBusiness();
    const response = await call("/api/v1/appointments", { key: apiKey });
    await expect(response).toHaveStatus(200);
    expect(response.headers.get("RateLimit-Policy")).toBe(REQUESTS);
    expect(response.headers.get("RateLimit")).toBeNull();
    for (const name of OLD_FIELDS) expect(response.headers.get(name)).toBeNull();
  });

  it("name both policies on a knowledge push, and count the pushes down in RateLimit", async () => {
    const { apiKey } = await createBusiness();
    const first = await call("/api/v1/knowledge/hours", { key: apiKey, method: "PUT", body: knowledge });
    const second = await call("/api/v1/knowledge/hours", { key: apiKey, method: "PUT", body: knowledge });
    expect([first.status, second.status]).toEqual([201, 200]);
    for (const [response, remaining] of [
      [first, PUSHES_PER_HOUR - 1],
      [second, PUSHES_PER_HOUR - 2],
    ] as const) {
      expect(response.headers.get("RateLimit-Policy")).toBe(`${REQUESTS}, ${PUSHES}`);
      const [push, ...others] = standing(response.headers.get("RateLimit"));
      expect(others).toEqual([]);
      expect(push).toMatchObject({ policy: "knowledge_pushes", remaining });
      expect(push?.resetInSeconds).toBeGreaterThan(0);
      expect(push?.resetInSeconds).toBeLessThanOrEqual(3600);
      for (const name of OLD_FIELDS) expect(response.headers.get(name)).toBeNull();
    }
  });

  it("answer the push past the hour's budget 429, with Retry-After the RateLimit's own reset", async () => {
    const { business, apiKey } = await createBusiness();
    const limits = env.BUSINESS_LIMITS.get(env.BUSINESS_LIMITS.idFromName(business.id));
    for (let i = 0; i < PUSHES_PER_HOUR; i++)
      await limits.take("knowledge_push", PUSHES_PER_HOUR, 3_600_000, Date.now());
    const refused = await call("/api/v1/knowledge/hours", { key: apiKey, method: "PUT", body: knowledge });
    await expectError(refused, 429, /at most 120 knowledge pushes an hour/, { code: "rate_limited" });
    expect(refused.headers.get("RateLimit-Policy")).toBe(`${REQUESTS}, ${PUSHES}`);
    const [push] = standing(refused.headers.get("RateLimit"));
    expect(push).toMatchObject({ policy: "knowledge_pushes", remaining: 0 });
    expect(refused.headers.get("Retry-After")).toBe(String(push?.resetInSeconds));
  });

  it("name the endpoint's sends and the business's test events on a test event, each with its remainder", async () => {
    const { apiKey } = await createBusiness();
    const endpoint = await subscribe(apiKey, receiverBox("rate-limit-fields").url("/hooks"));
    const sent = await call(`/api/v1/webhooks/${endpoint.id}/test`, { key: apiKey, method: "POST", body: {} });
    await expect(sent).toHaveStatus(202);
    expect(sent.headers.get("RateLimit-Policy")).toBe(
      `${REQUESTS}, "webhook_sends";q=${SENDS_PER_HOUR};w=3600, "webhook_tests";q=${TEST_EVENTS_PER_HOUR};w=3600`,
    );
    expect(standing(sent.headers.get("RateLimit")).map(({ policy, remaining }) => [policy, remaining])).toEqual([
      ["webhook_sends", SENDS_PER_HOUR - 1],
      ["webhook_tests", TEST_EVENTS_PER_HOUR - 1],
    ]);
  });
});
