import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import errorsPage from "../../docs/errors.md?raw";
import committed from "../../openapi.json";
import { businesses, webhookEndpoints } from "../../src/db/schema";
import { PUSHES_PER_HOUR } from "../../src/domain/knowledge/registration";
import { ERROR_CODES, type ErrorCode, PARTNER_ERROR_CODES } from "../../src/lib/error-codes";
import { createApiKey, createBusiness, db, shardDb } from "../helpers/fixtures";
import { call, expectErrorBody, json } from "../helpers/http";
import { intakeBody } from "../helpers/intakes";
import { expectServerErrors } from "../helpers/server-errors";
import { subscribe } from "../helpers/webhooks";

/*
 * Errors a program can read (docs/errors.md): every kind of error the partner API answers, one row each, with the one
 * body (`error`, `code`, `request_id`, and `param` exactly when one input is at fault). The errors that only a race
 * produces (`concurrent_change`, `idempotency_key_in_use`) and the 500 are checked where those are produced:
 * test/intakes/ownership-limit-and-patch.test.ts, test/api/idempotency.test.ts and test/api/errors.test.ts, through
 * the same `expectErrorBody`.
 */

const { business, apiKey } = await createBusiness();
const free = await createBusiness({ plan: "free" });
const lapsed = await createBusiness({ active: false });
const revoked = await createApiKey(business.id, { revoked: true });
const moving = await createBusiness({ shard: "eu1" });
const full = await createBusiness();
for (let i = 0; i < 20; i++) await subscribe(full.apiKey, `https://partner.example/hooks/${i}`);
const endpoint = await subscribe(apiKey, "https://partner.example/hooks");
const disabled = await subscribe(apiKey, "https://partner.example/disabled");
await db.update(webhookEndpoints).set({ status: "disabled" }).where(eq(webhookEndpoints.id, disabled.id));
const pushed = await createBusiness();
const limits = env.BUSINESS_LIMITS.get(env.BUSINESS_LIMITS.idFromName(pushed.business.id));
for (let i = 0; i < PUSHES_PER_HOUR; i++) await limits.take("knowledge_push", PUSHES_PER_HOUR, 3_600_000, Date.now());

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  call(`/api/v1${path}`, { key: apiKey, method: "POST", body, headers });
const knowledge = { title: "Holiday hours", content: "Closed from 24 to 26 December, open again on the 27th." };
const fieldsWithOneOption = intakeBody({
  fields: [
    { id: "q", label: "Question?", type: "text", required: true },
    { id: "pick", label: "Pick one", type: "select", required: false, options: ["only"] },
  ],
});

type Row = {
  what: string;
  request: () => Promise<Response>;
  status: number;
  code: ErrorCode;
  /** The input at fault; absent when the request as a whole is. */
  param?: string;
};

const ROWS: Row[] = [
  {
    what: "a body that is not JSON",
    request: () => post("/webhooks", '{"url": '),
    status: 400,
    code: "invalid_json",
  },
  {
    what: "a body of another type",
    request: () =>
      call("/api/v1/webhooks", {
        key: apiKey,
        method: "POST",
        body: "url=https://partner.example",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
      }),
    status: 400,
    code: "invalid_content_type",
  },
  {
    what: "a required body member left out",
    request: () => post("/webhooks", { events: ["booking.created"] }),
    status: 400,
    code: "parameter_missing",
    param: "url",
  },
  {
    what: "a body member of the wrong value",
    request: () => post("/webhooks", { url: "http://partner.example/hooks" }),
    status: 400,
    code: "parameter_invalid",
    param: "url",
  },
  {
    what: "a body member in an array, named by its index",
    request: () => post("/webhooks", { url: "https://partner.example/x", events: ["booking.created", "no.such"] }),
    status: 400,
    code: "parameter_invalid",
    param: "events[1]",
  },
  {
    what: "a nested intake member (named `field` too)",
    request: () => post("/intakes", fieldsWithOneOption),
    status: 400,
    code: "parameter_invalid",
    param: "fields[1].options",
  },
  {
    what: "a query parameter out of range",
    request: () => call("/api/v1/orders?limit=101", { key: apiKey }),
    status: 400,
    code: "parameter_invalid",
    param: "limit",
  },
  {
    what: "a query parameter of the wrong format",
    request: () => call("/api/v1/appointments?since=2026-02-30", { key: apiKey }),
    status: 400,
    code: "parameter_invalid",
    param: "since",
  },
  {
    what: "a page cursor that names nothing listable",
    request: () => call("/api/v1/events?starting_after=evt_nothing", { key: apiKey }),
    status: 400,
    code: "parameter_invalid",
    param: "starting_after",
  },
  {
    what: "a malformed Idempotency-Key",
    request: () => post("/webhooks", { url: "https://partner.example/k" }, { "Idempotency-Key": "" }),
    status: 400,
    code: "parameter_invalid",
    param: "Idempotency-Key",
  },
  {
    what: "knowledge content too short",
    request: () =>
      call("/api/v1/knowledge/hours", { key: apiKey, method: "PUT", body: { title: "Hours", content: "Short." } }),
    status: 400,
    code: "parameter_invalid",
    param: "content",
  },
  {
    what: "a change that changes nothing",
    request: () => call(`/api/v1/webhooks/${endpoint.id}`, { key: apiKey, method: "PATCH", body: {} }),
    status: 400,
    code: "invalid_request",
  },
  {
    what: "no credential",
    request: () => call("/api/v1/me"),
    status: 401,
    code: "authentication_required",
  },
  {
    what: "a malformed credential",
    request: () => call("/api/v1/me", { key: "not-a-key" }),
    status: 401,
    code: "invalid_credential",
  },
  {
    what: "an unknown key",
    request: () => call("/api/v1/me", { key: `${apiKey.slice(0, -4)}0000` }),
    status: 401,
    code: "invalid_credential",
  },
  {
    what: "a revoked key",
    request: () => call("/api/v1/me", { key: revoked.apiKey }),
    status: 401,
    code: "invalid_credential",
  },
  {
    what: "a plan without the API",
    request: () => call("/api/v1/me", { key: free.apiKey }),
    status: 403,
    code: "plan_required",
  },
  {
    what: "a lapsed plan",
    request: () => call("/api/v1/orders", { key: lapsed.apiKey }),
    status: 403,
    code: "plan_required",
  },
  {
    what: "a 21st webhook endpoint",
    request: () => call("/api/v1/webhooks", { key: full.apiKey, method: "POST", body: { url: "https://p.example" } }),
    status: 403,
    code: "limit_reached",
  },
  {
    what: "an unknown id",
    request: () => call("/api/v1/actions/99999999", { key: apiKey }),
    status: 404,
    code: "not_found",
  },
  {
    what: "a path id that is not a number",
    request: () => call("/api/v1/webhooks/abc", { key: apiKey, method: "DELETE" }),
    status: 404,
    code: "not_found",
  },
  {
    what: "another business's record",
    request: () => call(`/api/v1/webhooks/${endpoint.id}`, { key: full.apiKey, method: "DELETE" }),
    status: 404,
    code: "not_found",
  },
  {
    what: "no route at the path",
    request: () => call("/api/v1/bookings", { key: apiKey }),
    status: 404,
    code: "route_not_found",
  },
  {
    what: "a method the path does not take",
    request: () => call("/api/v1/me", { key: apiKey, method: "DELETE" }),
    status: 405,
    code: "method_not_allowed",
  },
  {
    what: "a send to a disabled endpoint",
    request: () => post(`/webhooks/${disabled.id}/test`, { event: "booking.created" }),
    status: 409,
    code: "invalid_state",
  },
  {
    what: "a body over the size limit",
    request: () => post("/webhooks", { url: "https://partner.example", description: "x".repeat(200_000) }),
    status: 413,
    code: "body_too_large",
  },
  {
    what: "knowledge content over 8,000 characters",
    request: () =>
      call("/api/v1/knowledge/long", {
        key: apiKey,
        method: "PUT",
        body: { title: "Long", content: "y".repeat(8001) },
      }),
    status: 413,
    code: "content_too_long",
    param: "content",
  },
  {
    what: "an Idempotency-Key used with another request",
    request: async () => {
      const key = `reuse-${crypto.randomUUID()}`;
      await post("/webhooks", { url: "https://partner.example/first" }, { "Idempotency-Key": key });
      return post("/webhooks", { url: "https://partner.example/second" }, { "Idempotency-Key": key });
    },
    status: 422,
    code: "idempotency_key_reused",
    param: "Idempotency-Key",
  },
  {
    what: "a spent budget",
    request: () => call("/api/v1/knowledge/one-more", { key: pushed.apiKey, method: "PUT", body: knowledge }),
    status: 429,
    code: "rate_limited",
  },
  {
    what: "a write while the business's data moves between shards",
    request: async () => {
      expectServerErrors();
      await shardDb("eu1")
        .update(businesses)
        .set({ movingSince: new Date().toISOString() })
        .where(eq(businesses.id, moving.business.id));
      return call("/api/v1/webhooks", { key: moving.apiKey, method: "POST", body: { url: "https://p.example/m" } });
    },
    status: 503,
    code: "temporarily_unavailable",
  },
];

describe("every error of the partner API: error, code, request_id, and param where one input is at fault", () => {
  it.each(ROWS)("$what: $status $code", async ({ request, status, code, param }) => {
    const response = await request();
    await expect(response).toHaveStatus(status);
    const body = await json(response);
    expectErrorBody(response, body);
    expect(body.code).toBe(code);
    expect(body.param).toBe(param);
  });

  it("covers every code a single request can produce", () => {
    const raced: ErrorCode[] = ["concurrent_change", "idempotency_key_in_use", "internal_error"];
    // `forbidden` is the code of refusals a credential's kind brings (none of /api/v1 today but the owner's pages').
    const notPartnerApi: ErrorCode[] = ["forbidden"];
    const covered = new Set(ROWS.map((row) => row.code));
    expect(PARTNER_ERROR_CODES.filter((code) => !covered.has(code)).sort()).toEqual(
      [...raced, ...notPartnerApi].sort(),
    );
  });

  it("names the input of an intake error as `field` too (docs/guides/intakes.md, Registering an intake)", async () => {
    const body = await json(await post("/intakes", fieldsWithOneOption));
    expect(body).toMatchObject({ field: "fields[1].options", param: "fields[1].options" });
  });

  it("gives every answer, success or error, an X-Request-Id, and the error body the same", async () => {
    const ok = await call("/api/v1/me", { key: apiKey });
    await expect(ok).toHaveStatus(200);
    expect(ok.headers.get("X-Request-Id")).toMatch(/\S/);
    const refused = await call("/api/v1/me");
    const body = await json(refused);
    expect(body.request_id).toBe(refused.headers.get("X-Request-Id"));
    expect(body.request_id).not.toBe(ok.headers.get("X-Request-Id"));
  });
});

describe("the one table of codes", () => {
  it("is the table of docs/errors.md, code for code with its status", () => {
    const rows = [...errorsPage.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map(([, code, status]) => [
      code,
      Number(status),
    ]);
    expect(rows).toEqual(PARTNER_ERROR_CODES.map((code) => [code, ERROR_CODES[code].status]));
  });

  it("is the reference's: the Error schema's code takes exactly these values", () => {
    const schema = committed.components.schemas.Error.properties.code;
    expect(schema.enum).toEqual(PARTNER_ERROR_CODES);
    for (const code of PARTNER_ERROR_CODES) expect(schema.description).toContain(`\`${code}\``);
  });
});
