import { env } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { MAX_BODY_BYTES } from "../../src/app";
import { createBusiness, shardD1 } from "../helpers/fixtures";
import { call, expectError, json, RUNTIME } from "../helpers/http";
import { conversationPath } from "../helpers/intakes";
import { expectServerErrors } from "../helpers/server-errors";
import { subscribe } from "../helpers/webhooks";

describe("the one error mapping (docs/errors.md)", async () => {
  const { apiKey } = await createBusiness();

  it("answers an unknown route with a 404 JSON sentence", async () => {
    const response = await call("/no/such/page");
    await expect(response).toHaveStatus(404);
    expect(response.headers.get("Content-Type")).toContain("application/json");
    expect(await json(response)).toEqual({
      error: "Nothing is at GET /no/such/page.",
      code: "route_not_found",
      request_id: response.headers.get("X-Request-Id"),
    });
  });

  it("answers an unknown /api/v1 route with 404 JSON once authenticated", async () => {
    const response = await call("/api/v1/nothing-here", { key: apiKey });
    await expect(response).toHaveStatus(404);
    expect(await json(response)).toEqual({
      error: "Nothing is at GET /api/v1/nothing-here.",
      code: "route_not_found",
      request_id: response.headers.get("X-Request-Id"),
    });
  });

  it("answers a wrong method with 405 JSON and an Allow header", async () => {
    const response = await call("/api/v1/me", { key: apiKey, method: "DELETE" });
    await expect(response).toHaveStatus(405);
    expect(response.headers.get("Allow")).toBe("GET, HEAD");
    expect(await json(response)).toEqual({
      error: "DELETE is not allowed on /api/v1/me; use GET or HEAD.",
      code: "method_not_allowed",
      request_id: response.headers.get("X-Request-Id"),
    });
  });

  it("answers a wrong method on a public route with 405 JSON", async () => {
    const response = await call("/api/v1/openapi.json", { method: "POST", body: {} });
    await expect(response).toHaveStatus(405);
    expect((await json(response)).error).toMatch(/not allowed/);
  });

  it("answers a malformed JSON body with 400", async () => {
    const response = await call("/internal/v1/businesses/00000000-0000-4000-8000-000000000000/plan", {
      method: "PUT",
      headers: { Authorization: "Bearer test-runtime-token-0123456789abcdef" },
      body: '{"plan": "pro",',
    });
    await expect(response).toHaveStatus(400);
    expect(await json(response)).toEqual({
      error: "The request body is not valid JSON.",
      code: "invalid_json",
      request_id: response.headers.get("X-Request-Id"),
    });
  });

  it("takes the largest intake written in 4-byte characters (about 95 KB): the body limit is chosen for it", async () => {
    const emoji = (count: number) => "😀".repeat(count);
    const fields = Array.from({ length: 12 }, (_, i) => ({
      id: `q${i}${"a".repeat(40 - String(i).length - 1)}`,
      label: emoji(80),
      type: "select",
      required: true,
      options: Array.from({ length: 20 }, (_, n) => `${String(n).padStart(2, "0")}${emoji(78)}`),
      help: emoji(200),
    }));
    const body = { name: `n${"a".repeat(39)}`, title: emoji(80), description: emoji(500), fields };
    const bytes = new TextEncoder().encode(JSON.stringify(body)).length;
    expect(bytes).toBeGreaterThan(90_000);
    expect(bytes).toBeLessThanOrEqual(MAX_BODY_BYTES);
    const response = await call("/api/v1/intakes", { key: apiKey, method: "POST", body });
    await expect(response).toHaveStatus(201);
  });

  it("answers a body over the size limit with 413 before reading it all", async () => {
    const response = await call("/api/v1/me", { key: apiKey, method: "POST", body: "x".repeat(MAX_BODY_BYTES + 1) });
    await expect(response).toHaveStatus(413);
    expect(await json(response)).toEqual({
      error: `The request body is larger than ${MAX_BODY_BYTES} bytes.`,
      code: "body_too_large",
      request_id: response.headers.get("X-Request-Id"),
    });
  });

  it("gives every response a request id, and keeps one the caller sent", async () => {
    const fresh = await call("/api/v1/me", { key: apiKey });
    expect(fresh.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await call("/no/such/page", { headers: { "X-Request-Id": "partner-trace-42" } });
    expect(echoed.headers.get("X-Request-Id")).toBe("partner-trace-42");
  });
});

describe("a body of the wrong content type (a 400 naming the type, not a 415: docs/decisions.md, Errors)", async () => {
  const { business, apiKey } = await createBusiness();
  const NOT_JSON = "The request body must be sent as application/json.";
  const WRONG_TYPES = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", ""];
  const body = JSON.stringify({ plan: "pro", active: true });

  // Every route that takes a body, with the credential it needs.
  const partnerRoutes = [
    ["POST", "/api/v1/webhooks"],
    ["POST", "/api/v1/actions"],
    ["PATCH", "/api/v1/actions/1"],
    ["PUT", "/api/v1/knowledge/opening-hours"],
    ["POST", "/api/v1/intakes"],
    ["PATCH", "/api/v1/intakes/1"],
    ["POST", "/api/v1/webhooks/1/recover"],
    ["POST", "/api/v1/webhooks/1/test"],
    ["POST", "/api/v1/webhooks/1/rotate-secret"],
    ["POST", "/api/v1/actions/1/rotate-secret"],
  ] as const;
  const internalRoutes = [
    ["PUT", `/internal/v1/businesses/${business.id}/plan`],
    ["POST", `/internal/v1/businesses/${business.id}/events`],
    ["POST", `/internal/v1/businesses/${business.id}/actions/stock/call`],
    ["POST", conversationPath(business.id, "conv-1")],
    ["POST", `${conversationPath(business.id, "conv-1")}/answers`],
  ] as const;

  it.each(partnerRoutes)("answers %s %s with 400 and the sentence, for every other type", async (method, path) => {
    for (const type of WRONG_TYPES) {
      const response = await call(path, { key: apiKey, method, body, headers: { "Content-Type": type } });
      await expectError(response, 400, NOT_JSON, { code: "invalid_content_type", param: undefined });
    }
  });

  it.each(internalRoutes)("answers %s %s with 400 and the sentence, for every other type", async (method, path) => {
    for (const type of WRONG_TYPES) {
      const response = await call(path, { method, body, headers: { ...RUNTIME, "Content-Type": type } });
      await expectError(response, 400, NOT_JSON, { code: "invalid_content_type", param: undefined });
    }
  });

  it("judges the credential first: without one the answer is 401", async () => {
    const headers = { "Content-Type": "text/plain" };
    await expect(await call(partnerRoutes[0][1], { method: "POST", body, headers })).toHaveStatus(401);
    await expect(await call(internalRoutes[0][1], { method: "PUT", body, headers })).toHaveStatus(401);
  });

  it("takes JSON with parameters, and lets a request without a body carry a stray Content-Type", async () => {
    const plan = await call(internalRoutes[0][1], {
      method: "PUT",
      body,
      headers: { ...RUNTIME, "Content-Type": "application/json; charset=utf-8" },
    });
    await expect(plan).toHaveStatus(200);
    const headers = { "Content-Type": "text/plain" };
    await expect(await call("/api/v1/me", { key: apiKey, headers })).toHaveStatus(200);
    // The conversation's state is read, not refused: no intake has run in it.
    const state = await call(conversationPath(business.id, "conv-1"), { headers: { ...RUNTIME, ...headers } });
    await expectError(state, 404, "No intake has run in this conversation.");
  });
});

describe("the statuses the OpenAPI document gives (docs/errors.md, Codes)", async () => {
  type Operation = { requestBody?: unknown; responses: Record<string, { description: string }> };
  const document = await json<{ paths: Record<string, Record<string, Operation>> }>(await call("/api/v1/openapi.json"));
  const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ name: `${method} ${path}`, operation })),
  );

  // Each operation that answers 409, and what its description says the conflict is.
  // Every POST also answers 409 while a request with its Idempotency-Key is still running (docs/idempotency.md).
  const KEY_RUNNING = /Idempotency-Key is still running/;
  const CONFLICTS: Record<string, RegExp> = {
    "patch /intakes/{id}": /another change of this intake/i,
    "patch /actions/{id}": /another change of this action.*a tool of an MCP server/i,
    "post /actions": KEY_RUNNING,
    "post /actions/{id}/rotate-secret": /tool of an MCP server.*Idempotency-Key is still running/i,
    "post /mcp-servers": KEY_RUNNING,
    "post /mcp-servers/{id}/refresh": /another change of this server's actions.*Idempotency-Key is still running/i,
    "post /intakes": KEY_RUNNING,
    "post /listen-sessions": KEY_RUNNING,
    "post /webhooks": KEY_RUNNING,
    "post /webhooks/{id}/enable": KEY_RUNNING,
    "post /webhooks/{id}/rotate-secret": KEY_RUNNING,
    // A send on demand to a disabled endpoint (docs/webhooks.md, Endpoint health).
    "post /webhooks/{id}/deliveries/{delivery_id}/redeliver": /endpoint is disabled.*Idempotency-Key is still running/i,
    "post /webhooks/{id}/recover": /endpoint is disabled.*Idempotency-Key is still running/i,
    "post /webhooks/{id}/test": /endpoint is disabled.*Idempotency-Key is still running/i,
    "post /sandbox/events": KEY_RUNNING,
    // A business's copy of an app endpoint disabled by its health, or ended by a disconnection (no Idempotency-Key).
    "post /app/webhooks/{id}/deliveries/{delivery_id}/redeliver": /copy of the endpoint is disabled.*disconnected/i,
    "post /app/webhooks/{id}/recover": /copy of the endpoint is disabled.*disconnected/i,
    // An intake or action its owner has not switched on (docs/decisions.md, Sandbox operations).
    "post /sandbox/intakes/{id}/conversations": /intake is switched off.*Idempotency-Key is still running/i,
    "post /sandbox/actions/{id}/calls": /action is switched off.*Idempotency-Key is still running/i,
  };

  it("gives 409 only where a change conflicts with the resource's state, saying when; no 415 anywhere", () => {
    const with409 = operations.filter(({ operation }) => "409" in operation.responses);
    expect(with409.map(({ name }) => name).sort()).toEqual(Object.keys(CONFLICTS).sort());
    for (const { name, operation } of with409) {
      expect(operation.responses["409"]?.description).toMatch(CONFLICTS[name] ?? /^$/);
    }
    expect(operations.filter(({ operation }) => "415" in operation.responses)).toEqual([]);
  });

  it("says on every operation that takes a body that a body of another type is a 400", () => {
    const withBody = operations.filter(({ operation }) => operation.requestBody !== undefined);
    expect(withBody.length).toBeGreaterThanOrEqual(6);
    for (const { operation } of withBody) expect(operation.responses["400"]?.description).toMatch(/application\/json/);
  });
});

describe("the log line of an unexpected error (never a query's bound parameters: docs/security.md, Logs)", async () => {
  const { business, apiKey } = await createBusiness();
  const endpoint = await subscribe(apiKey, `${env.RECEIVER_URL}/hooks`);
  const trigger = `fail_endpoint_delete_${endpoint.id}`;

  it("names the error and D1's own words, with the request id, and no bound value", async () => {
    expectServerErrors();
    // A real failure of D1 inside the request: deleting this endpoint binds the business id and the endpoint id.
    await shardD1.exec(
      `CREATE TRIGGER ${trigger} BEFORE DELETE ON webhook_endpoints WHEN OLD.id = ${endpoint.id} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
    const logged = vi.spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const response = await call(`/api/v1/webhooks/${endpoint.id}`, { key: apiKey, method: "DELETE" });
      await expect(response).toHaveStatus(500);
      expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(logged).toHaveBeenCalledTimes(1);
      const line = String(logged.mock.calls[0]?.[0]);
      expect(JSON.parse(line)).toEqual({
        level: "error",
        requestId: response.headers.get("X-Request-Id"),
        error: "DrizzleQueryError",
        // The statement (with its placeholders), then D1's words once.
        message: expect.stringMatching(
          /^Failed query: delete from "webhook_endpoints" where .* = \? .*; cause: D1_ERROR: injected fault: SQLITE_CONSTRAINT \(extended: SQLITE_CONSTRAINT_TRIGGER\)$/,
        ),
      });
      expect(line).not.toContain(business.id);
      expect(line).not.toContain("params");
    } finally {
      logged.mockRestore();
      await shardD1.exec(`DROP TRIGGER ${trigger}`);
    }
  });
});
