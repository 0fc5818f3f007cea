import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../src/app";
import { createBusiness } from "./helpers/fixtures";
import { call, json } from "./helpers/http";

describe("the one error mapping (spec: Errors)", async () => {
  const { apiKey } = await createBusiness();

  it("answers an unknown route with a 404 JSON sentence", async () => {
    const response = await call("/no/such/page");
    expect(response.status).toBe(404);
    expect(response.headers.get("Content-Type")).toContain("application/json");
    expect(await json(response)).toEqual({ error: "Nothing is at GET /no/such/page." });
  });

  it("answers an unknown /api/v1 route with 404 JSON once authenticated", async () => {
    const response = await call("/api/v1/nothing-here", { key: apiKey });
    expect(response.status).toBe(404);
    expect(await json(response)).toEqual({ error: "Nothing is at GET /api/v1/nothing-here." });
  });

  it("answers a wrong method with 405 JSON and an Allow header", async () => {
    const response = await call("/api/v1/me", { key: apiKey, method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("Allow")).toBe("GET, HEAD");
    expect(await json(response)).toEqual({ error: "DELETE is not allowed on /api/v1/me; use GET or HEAD." });
  });

  it("answers a wrong method on a public route with 405 JSON", async () => {
    const response = await call("/api/v1/openapi.json", { method: "POST", body: {} });
    expect(response.status).toBe(405);
    expect((await json(response)).error).toMatch(/not allowed/);
  });

  it("answers a malformed JSON body with 400", async () => {
    const response = await call("/internal/v1/businesses/00000000-0000-4000-8000-000000000000/plan", {
      method: "PUT",
      headers: { Authorization: "Bearer test-runtime-token-0123456789abcdef" },
      body: '{"plan": "pro",',
    });
    expect(response.status).toBe(400);
    expect(await json(response)).toEqual({ error: "The request body is not valid JSON." });
  });

  it("answers a body over the size limit with 413 before reading it all", async () => {
    const response = await call("/api/v1/me", { key: apiKey, method: "POST", body: "x".repeat(MAX_BODY_BYTES + 1) });
    expect(response.status).toBe(413);
    expect(await json(response)).toEqual({ error: `The request body is larger than ${MAX_BODY_BYTES} bytes.` });
  });

  it("gives every response a request id, and keeps one the caller sent", async () => {
    const fresh = await call("/api/v1/me", { key: apiKey });
    expect(fresh.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await call("/no/such/page", { headers: { "X-Request-Id": "partner-trace-42" } });
    expect(echoed.headers.get("X-Request-Id")).toBe("partner-trace-42");
  });
});
