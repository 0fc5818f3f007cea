import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { countingShards } from "../helpers/counting-d1";
import { BASE, call } from "../helpers/http";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import {
  businessFor,
  isSandboxRoute,
  type Method,
  REUSED_ROUND_TRIPS,
  ROUTES,
  realPath,
} from "../helpers/partner-routes";

/** The D1 round trips made before the response is answered (work left to `waitUntil` is not waited for). */
async function roundTrips(url: string, method: Method, credential: string, body?: unknown) {
  const { bindings, trips } = countingShards(env);
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { Authorization: `Bearer ${credential}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const request = new Request(`${BASE}${url}`, { method, headers, body: payload });
  const response = await worker.fetch(request, { ...env, ...bindings }, ctx);
  const count = trips.length;
  await waitOnExecutionContext(ctx);
  return { status: response.status, count, trips: [...trips.slice(0, count)] };
}

// docs/architecture.md, Performance budget: a partner read makes exactly one D1 round trip (the credential and the data
// in one batch), a write at most two; with an API key and with an OAuth access token.
describe("D1 round trips of every partner route", () => {
  it.each(ROUTES)("%s %s: one for a read, at most two for a write", async (method, path, ok, body) => {
    // A business of its own per credential, since a record a path names is created with the credential itself.
    const withKey = await businessFor(path);
    // A sandbox route answers a test key only: it has no token to count.
    const withToken = isSandboxRoute(path) ? [] : [(await connectApp(await createOwnerBusiness())).tokens.access_token];
    for (const credential of [withKey.apiKey, ...withToken]) {
      const url = await realPath(path, credential);
      // The first request of an hour also records the credential's use, after its answer (waitUntil;
      // test/access/owner-sides.test.ts): measured here is every other request.
      await call("/api/v1/me", { key: credential });
      const { status, count, trips } = await roundTrips(url, method, credential, body);
      expect(status).toBe(ok);
      expectWithinBudget(method, path, count, trips);
    }
  });
});

function expectWithinBudget(method: Method, path: string, count: number, trips: string[]) {
  if (method === "GET") expect(trips, "a read").toHaveLength(1);
  else expect(count, `a write: ${trips.join(" | ")}`).toBeLessThanOrEqual(REUSED_ROUND_TRIPS[`${method} ${path}`] ?? 2);
}

// docs/scaling.md, How a request finds its shard: a regional business's key names its shard, so the request goes
// straight to it, with the same budget and no lookup in the global database (counted above with every database).
describe.each(["eu1", "us1"] as const)("D1 round trips of every partner route, for a business in %s", (shard) => {
  it.each(ROUTES)("%s %s: one for a read, at most two for a write", async (method, path, ok, body) => {
    const { apiKey } = await businessFor(path, { shard });
    const url = await realPath(path, apiKey);
    await call("/api/v1/me", { key: apiKey });
    const { status, count, trips } = await roundTrips(url, method, apiKey, body);
    expect(status).toBe(ok);
    expectWithinBudget(method, path, count, trips);
  });
});
