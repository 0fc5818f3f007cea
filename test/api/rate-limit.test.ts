import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { REQUESTS_PER_MINUTE } from "../../src/admission/partner-admission";
import { createApiKey, createBusiness } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";

describe("the per-credential request budget", async () => {
  const { business, apiKey } = await createBusiness();

  it("states the policy on every partner response", async () => {
    const response = await call("/api/v1/me", { key: apiKey });
    expect(response.headers.get("RateLimit-Policy")).toBe(`"requests";q=${REQUESTS_PER_MINUTE};w=60`);
    expect(response.headers.get("RateLimit")).toBeNull();
  });

  it(`answers 429 with Retry-After past ${REQUESTS_PER_MINUTE} requests a minute, for that credential only`, {
    timeout: 30_000,
  }, async () => {
    const { apiKey, apiKeyId } = await createApiKey(business.id);
    // The budget's counter is the Rate Limiting binding's, counted here directly up to one use short of the limit;
    // the last use and the first refusal go through the Worker, so the wiring (binding, key, answer) is what is proven.
    await awayFromWindowEdge(2_000);
    for (let i = 1; i < REQUESTS_PER_MINUTE; i++) await env.PRINCIPAL_RATE_LIMIT.limit({ key: `api_key:${apiKeyId}` });
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(200);
    const refused = await call("/api/v1/orders", { key: apiKey });
    await expect(refused).toHaveStatus(429);
    expect(refused.headers.get("Retry-After")).toBe("60");
    expect(refused.headers.get("RateLimit-Policy")).toBe(`"requests";q=${REQUESTS_PER_MINUTE};w=60`);
    expect(refused.headers.get("RateLimit")).toBe('"requests";r=0;t=60');
    expect(await json(refused)).toEqual({
      error: `Too many requests: a credential can make ${REQUESTS_PER_MINUTE} requests a minute.`,
      code: "rate_limited",
      request_id: refused.headers.get("X-Request-Id"),
    });
    const second = await createApiKey(business.id);
    await expect(await call("/api/v1/me", { key: second.apiKey })).toHaveStatus(200);
  });
});
