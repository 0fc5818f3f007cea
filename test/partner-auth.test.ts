import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { API_KEY_PREFIX } from "../src/domain/access/principals";
import worker from "../src/index";
import { randomToken } from "../src/lib/secrets";
import { partnerApi } from "../src/routes/partner-api";
import { countingD1 } from "./helpers/counting-d1";
import { createApiKey, createBusiness } from "./helpers/fixtures";
import { BASE, call, expectError, expectMissingCredential, json } from "./helpers/http";
import { createIntake, intakeBody } from "./helpers/intakes";
import { connectApp, createOwnerBusiness } from "./helpers/oauth";
import { subscribe } from "./helpers/webhooks";

// Spec, Authentication ("A missing, malformed or revoked key returns 401") and What the service does ("The API
// requires ... Pro or Business. When the plan lapses, calls return 403"), on every partner route under /api/v1.
// The OpenAPI document and /docs are public and are not partner routes.

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
/** A route as the OpenAPI document names it, the status a valid call with a good key answers, and its JSON body. */
type Route = [method: Method, path: string, ok: number, body?: unknown];

const ACTION = {
  name: "check_stock",
  title: "Check stock",
  description: "Tells whether a product is in stock today, for customers asking about availability.",
  url: "https://partner.example/stock",
  parameters: {
    type: "object",
    properties: { sku: { type: "string", description: "Product code" } },
    required: ["sku"],
  },
};
const KNOWLEDGE = { title: "Holiday hours", content: "Closed from 24 to 26 December." };

/** Every partner route: a route added to the API needs one row here (the last test fails until it has one). */
const ROUTES: Route[] = [
  ["GET", "/me", 200],
  ["GET", "/appointments", 200],
  ["GET", "/orders", 200],
  ["GET", "/webhooks", 200],
  ["POST", "/webhooks", 201, { url: "https://partner.example/hooks", events: ["booking.created"] }],
  ["DELETE", "/webhooks/{id}", 204],
  ["POST", "/webhooks/{id}/enable", 200],
  ["POST", "/webhooks/{id}/rotate-secret", 200, { expires_in: 60 }],
  ["POST", "/actions/{id}/rotate-secret", 200, { expires_in: 60 }],
  ["GET", "/webhooks/{id}/deliveries", 200],
  ["POST", "/webhooks/{id}/deliveries/{delivery_id}/redeliver", 202],
  ["POST", "/webhooks/{id}/recover", 202, { since: new Date(Date.now() - 3_600_000).toISOString() }],
  ["POST", "/webhooks/{id}/test", 202, { event: "booking.created" }],
  ["GET", "/events", 200],
  ["GET", "/events/{id}", 200],
  ["GET", "/knowledge", 200],
  ["PUT", "/knowledge/{key}", 200, { title: "Opening hours", content: "Open every day from 9 to 17." }],
  ["DELETE", "/knowledge/{key}", 204],
  ["GET", "/intakes", 200],
  ["POST", "/intakes", 201, intakeBody()],
  ["GET", "/intakes/{id}", 200],
  ["PATCH", "/intakes/{id}", 200, { title: "Quote request, renovations" }],
  ["DELETE", "/intakes/{id}", 204],
  ["GET", "/intakes/{id}/responses", 200],
  ["GET", "/actions", 200],
  ["POST", "/actions", 201, ACTION],
  ["GET", "/actions/{id}", 200],
  ["PATCH", "/actions/{id}", 200, { title: "Check stock now" }],
  ["DELETE", "/actions/{id}", 204],
];

async function created<T>(response: Response): Promise<T> {
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  return json<T>(response);
}

/** Creates, with the business's own key, the record a path parameter of `resource` names; answers its id or key. */
const RECORDS: Record<string, (apiKey: string) => Promise<string | number>> = {
  webhooks: async (apiKey) => (await subscribe(apiKey, "https://partner.example/hooks")).id,
  // A key no other file pushes: the database is shared, and some files read knowledge rows by key alone.
  knowledge: async (apiKey) => {
    const response = await call("/api/v1/knowledge/partner-auth-hours", {
      key: apiKey,
      method: "PUT",
      body: KNOWLEDGE,
    });
    return (await created<{ key: string }>(response)).key;
  },
  intakes: async (apiKey) => (await createIntake(apiKey)).id,
  actions: async (apiKey) =>
    (await created<{ id: number }>(await call("/api/v1/actions", { key: apiKey, method: "POST", body: ACTION }))).id,
  // A test event sent to an endpoint of the business: an event the key can read.
  events: async (apiKey) => (await testEvent(apiKey, await RECORDS.webhooks?.(apiKey))).event_id,
};

/** A test event to the endpoint (DESIGN.md, Test events by API), written before the answer. */
async function testEvent(apiKey: string, endpointId: string | number | undefined) {
  const response = await call(`/api/v1/webhooks/${endpointId}/test`, { key: apiKey, method: "POST", body: {} });
  if (response.status !== 202) throw new Error(`test event failed: ${response.status} ${await response.text()}`);
  return json<{ event_id: string }>(response);
}

/** A delivery of the endpoint: that of a test event, as its list shows it. */
async function deliveryOf(apiKey: string, endpointId: string) {
  await testEvent(apiKey, endpointId);
  const listed = await call(`/api/v1/webhooks/${endpointId}/deliveries`, { key: apiKey });
  return (await json<{ data: Array<{ id: number }> }>(listed)).data[0]?.id;
}

/**
 * The path with its parameter (`{id}`, `{key}`) replaced by a record created in the business of `apiKey`, and a
 * `{delivery_id}` after it by a delivery of that record (an endpoint).
 */
async function realPath(path: string, apiKey: string) {
  const parameter = /\{\w+\}/.exec(path);
  if (!parameter) return `/api/v1${path}`;
  const resource = path.split("/")[1] ?? "";
  const create = RECORDS[resource];
  if (!create) throw new Error(`no record for ${path}: add a creator for "${resource}" to RECORDS`);
  const id = encodeURIComponent(String(await create(apiKey)));
  const withId = path.replace(parameter[0], id);
  if (!withId.includes("{delivery_id}")) return `/api/v1${withId}`;
  return `/api/v1${withId.replace("{delivery_id}", String(await deliveryOf(apiKey, id)))}`;
}

describe("authentication and the plan rule on every partner route", async () => {
  const lapsed = await createBusiness({ plan: "pro", active: false });
  const free = await createBusiness({ plan: "free", active: true });

  it.each(ROUTES)("%s %s: 401 without a valid key, 403 on a lapsed or free plan", async (method, path, ok, body) => {
    // A business of its own per route, so that a route's record (and a DELETE of it) touches no other row.
    const { business, apiKey } = await createBusiness();
    const revoked = await createApiKey(business.id, { revoked: true });
    const url = await realPath(path, apiKey);
    const send = (headers: Record<string, string> = {}, key?: string) => call(url, { method, body, headers, key });

    await expectMissingCredential(await send());
    await expectError(await send({ Authorization: "Bearer sk_live_short" }), 401, /malformed/);
    await expectError(await send({}, randomToken(API_KEY_PREFIX)), 401, /not recognised/);
    await expectError(await send({}, revoked.apiKey), 401, /revoked/);
    await expectError(await send({}, lapsed.apiKey), 403, /lapsed/);
    await expectError(await send({}, free.apiKey), 403, /does not include the API/);

    // The same request with the business's own key succeeds: the refusals above came from the credential alone.
    const answered = await send({}, apiKey);
    expect(answered.status, await answered.clone().text()).toBe(ok);
  });

  // The routes that take a path parameter or a query, each sent one that names nothing or is out of range.
  const CHECKED = ROUTES.filter(([, path]) => path.includes("{") || ["/appointments", "/orders"].includes(path));
  it.each(CHECKED)(
    "%s %s: a refused credential is answered before the request's own 400 or 404",
    async (method, path) => {
      const { business, apiKey } = await createBusiness();
      const revoked = await createApiKey(business.id, { revoked: true });
      const url = await realPath(path, apiKey);
      // A query parameter that no route accepts as it is, and an id or key that names nothing.
      const wrong = `${url
        .replace(/\/\d+(?=\/|$)/, "/999999999")
        .replace(/partner-auth-hours/, "nothing-here")
        .replace(/\/evt_[\w-]+/, "/evt_nothing")}?limit=0`;
      const body = method === "GET" || method === "DELETE" ? undefined : { title: "" };
      await expectError(await call(wrong, { method, body, key: revoked.apiKey }), 401, /revoked/);
      await expectError(await call(wrong, { method, body, key: lapsed.apiKey }), 403, /lapsed/);
      // With the business's own key, the same request is refused for what it is.
      expect([400, 404]).toContain((await call(wrong, { method, body, key: apiKey })).status);
    },
  );

  it("has a row for every route of the OpenAPI document and of the router", async () => {
    const response = await call("/api/v1/openapi.json");
    expect(response.status).toBe(200);
    const document = await json<{ paths: Record<string, Record<string, unknown>> }>(response);
    const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    // A route added without partnerRoute() is missing from the document, but not from the router.
    const routed = partnerApi.routes
      .filter((route) => route.method !== "ALL")
      .map((route) => `${route.method.toUpperCase()} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    const table = ROUTES.map(([method, path]) => `${method} ${path}`);

    expect(new Set(table).size).toBe(table.length);
    expect([...table].sort()).toEqual([...new Set(documented)].sort());
    expect([...table].sort()).toEqual([...new Set(routed)].sort());
  });
});

/** The D1 round trips made before the response is answered (work left to `waitUntil` is not waited for). */
async function roundTrips(url: string, method: Method, credential: string, body?: unknown) {
  const { d1, trips } = countingD1(env.DB);
  const ctx = createExecutionContext();
  const headers: Record<string, string> = { Authorization: `Bearer ${credential}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const request = new Request(`${BASE}${url}`, { method, headers, body: payload });
  const response = await worker.fetch(request, { ...env, DB: d1 }, ctx);
  const count = trips.length;
  await waitOnExecutionContext(ctx);
  return { status: response.status, count, trips: [...trips.slice(0, count)] };
}

// DESIGN.md, Performance budget: a partner read makes exactly one D1 round trip (the credential and the data in one
// batch), a write at most two; with an API key and with an OAuth access token.
describe("D1 round trips of every partner route", () => {
  it.each(ROUTES)("%s %s: one for a read, at most two for a write", async (method, path, ok, body) => {
    // A business of its own per credential, since a record a path names is created with the credential itself.
    const withKey = await createBusiness();
    const withToken = await connectApp(await createOwnerBusiness());
    for (const credential of [withKey.apiKey, withToken.tokens.access_token]) {
      const url = await realPath(path, credential);
      // The first request of an hour also records the credential's use, after its answer (waitUntil, test/last-use):
      // measured here is every other request.
      await call("/api/v1/me", { key: credential });
      const { status, count, trips } = await roundTrips(url, method, credential, body);
      expect(status).toBe(ok);
      if (method === "GET") expect(trips, "a read").toHaveLength(1);
      else expect(count, `a write: ${trips.join(" | ")}`).toBeLessThanOrEqual(2);
    }
  });
});
