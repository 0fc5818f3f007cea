import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { orders } from "../../src/db/schema";
import worker from "../../src/index";
import { otherOriginSources } from "../helpers/csp";
import { createBusiness, db, orderRow, shardD1 } from "../helpers/fixtures";
import { json, RUNTIME } from "../helpers/http";
import { expectServerErrors } from "../helpers/server-errors";

// docs/architecture.md, Pages. Every response carries `X-Content-Type-Options: nosniff`, and HSTS when it was
// served over https; every HTML page carries the one header set, with a CSP that names no other origin.

const HSTS = "max-age=31536000; includeSubDomains";

/** The Worker's fetch handler, as `call` (helpers/http.ts) reaches it, at an origin of either scheme. */
async function fetchAt(origin: string, path: string, init: RequestInit = {}) {
  const ctx = createExecutionContext();
  const response = await worker.fetch(new Request(`${origin}${path}`, init), env, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe.each([
  { scheme: "http", origin: "http://localhost:8787", hsts: null },
  { scheme: "https", origin: "https://localhost:8787", hsts: HSTS },
])("every response over $scheme", async ({ origin, hsts }) => {
  const { business, apiKey } = await createBusiness();
  const cases: Array<{ name: string; path: string; init?: RequestInit; status: number }> = [
    {
      name: "a partner GET",
      path: "/api/v1/me",
      init: { headers: { Authorization: `Bearer ${apiKey}` } },
      status: 200,
    },
    { name: "a partner request without a credential", path: "/api/v1/me", status: 401 },
    { name: "a path that does not exist", path: "/no/such/page", status: 404 },
    {
      name: "an OAuth token error",
      path: "/api/oauth/token",
      init: {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: "grant_type=password&client_id=nobody",
      },
      status: 401,
    },
    {
      name: "an internal call",
      path: `/internal/v1/businesses/${business.id}/context?channel=chat_page`,
      init: { headers: RUNTIME },
      status: 200,
    },
    { name: "a dashboard page", path: "/dashboard/sign-in", status: 200 },
    { name: "the API reference", path: "/docs", status: 200 },
    { name: "the API reference's script", path: "/docs/reference.js", status: 200 },
  ];

  it.each(cases)("$name ($status): nosniff, and HSTS only over https", async ({ path, init, status }) => {
    const response = await fetchAt(origin, path, init);
    await expect(response).toHaveStatus(status);
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(response.headers.get("Strict-Transport-Security")).toBe(hsts);
  });
});

describe("every HTML page's headers", () => {
  it.each(["/dashboard/sign-in", "/docs"])(
    "%s: a CSP naming no other origin, no framing, no referrer",
    async (path) => {
      const response = await fetchAt("https://localhost:8787", path);
      expect(response.headers.get("Content-Type")).toContain("text/html");
      const csp = response.headers.get("Content-Security-Policy") ?? "";
      expect(csp).toMatch(/^default-src 'none'; /);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(otherOriginSources(csp)).toEqual([]);
      expect(response.headers.get("X-Frame-Options")).toBe("DENY");
      expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(response.headers.get("Referrer-Policy")).toBe("no-referrer");
    },
  );
});

// Every partner answer under /api/v1, success or error, whoever answered it: `Cache-Control: no-store`
// (RFC 9111 §5.2.2.5). The public OpenAPI document keeps its own caching: it is the same for everyone.
describe("every partner answer under /api/v1: Cache-Control no-store", async () => {
  const { business, apiKey } = await createBusiness();
  const lapsed = await createBusiness({ active: false });
  const auth = { Authorization: `Bearer ${apiKey}` };
  const asJson = { ...auth, "Content-Type": "application/json" };
  const endpoint = await json<{ id: number }>(
    await fetchAt("http://localhost:8787", "/api/v1/webhooks", {
      method: "POST",
      headers: asJson,
      body: JSON.stringify({ url: "https://partner.example/hooks", events: ["lead.created"] }),
    }),
  );
  const cases: Array<{ name: string; path: string; init?: RequestInit; status: number }> = [
    { name: "a GET", path: "/api/v1/me", init: { headers: auth }, status: 200 },
    { name: "a list", path: "/api/v1/appointments?limit=1", init: { headers: auth }, status: 200 },
    {
      name: "a creation, with a secret shown once",
      path: "/api/v1/webhooks",
      init: {
        method: "POST",
        headers: asJson,
        body: JSON.stringify({ url: "https://partner.example/other", events: ["lead.created"] }),
      },
      status: 201,
    },
    {
      name: "a deletion",
      path: `/api/v1/webhooks/${endpoint.id}`,
      init: { method: "DELETE", headers: auth },
      status: 204,
    },
    { name: "a query the schema refuses", path: "/api/v1/appointments?limit=0", init: { headers: auth }, status: 400 },
    { name: "no credential", path: "/api/v1/me", status: 401 },
    {
      name: "a lapsed plan",
      path: "/api/v1/me",
      init: { headers: { Authorization: `Bearer ${lapsed.apiKey}` } },
      status: 403,
    },
    {
      name: "an unknown id",
      path: "/api/v1/webhooks/999999999/test",
      init: { method: "POST", headers: asJson, body: "{}" },
      status: 404,
    },
    { name: "a path that does not exist", path: "/api/v1/no-such-thing", init: { headers: auth }, status: 404 },
    {
      name: "a method the path does not take",
      path: "/api/v1/me",
      init: { method: "PUT", headers: auth },
      status: 405,
    },
    {
      name: "a body over the limit",
      path: "/api/v1/webhooks",
      init: { method: "POST", headers: asJson, body: JSON.stringify({ url: "x".repeat(200 * 1024) }) },
      status: 413,
    },
  ];

  it.each(cases)("$name ($status)", async ({ path, init, status }) => {
    const response = await fetchAt("http://localhost:8787", path, init);
    await expect(response).toHaveStatus(status);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    if (status !== 204) expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
  });

  it("an unexpected error (500)", async () => {
    expectServerErrors();
    // A stored order whose items are not JSON: reading it throws inside the route.
    const [order] = await db.insert(orders).values(orderRow(business.id)).returning();
    await shardD1.prepare("UPDATE orders SET items = 'not json' WHERE id = ?").bind(order?.id).run();
    const response = await fetchAt("http://localhost:8787", "/api/v1/orders", { headers: auth });
    await expect(response).toHaveStatus(500);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(await response.json()).toEqual({
      error: "Something failed on our side; retry with a short backoff.",
      code: "internal_error",
      request_id: response.headers.get("X-Request-Id"),
    });
  });

  it("but not the public OpenAPI document, which keeps its own caching", async () => {
    const response = await fetchAt("http://localhost:8787", "/api/v1/openapi.json");
    await expect(response).toHaveStatus(200);
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=300");
  });

  it("and not the answers outside /api/v1 that set none", async () => {
    expect((await fetchAt("http://localhost:8787", "/no/such/page")).headers.get("Cache-Control")).toBeNull();
  });
});
