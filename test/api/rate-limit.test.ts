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
    await awayFromWindowEdge();
    const statuses: number[] = [];
    for (let i = 0; i < REQUESTS_PER_MINUTE + 5; i++) statuses.push((await call("/api/v1/me", { key: apiKey })).status);
    const refusedAt = statuses.indexOf(429);
    expect(refusedAt).toBeGreaterThan(0);
    expect(refusedAt).toBeLessThanOrEqual(REQUESTS_PER_MINUTE);
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
