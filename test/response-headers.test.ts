import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { otherOriginSources } from "./helpers/csp";
import { createBusiness } from "./helpers/fixtures";
import { RUNTIME } from "./helpers/http";

// DESIGN.md, Security notes: Pages. Every response carries `X-Content-Type-Options: nosniff`, and HSTS when it was
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
    expect(response.status).toBe(status);
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
