import { env } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { bookings } from "../../src/db/schema";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { sha256Hex } from "../../src/lib/secrets";
import { moved } from "../helpers/business-move";
import { countingD1 } from "../helpers/counting-d1";
import { page, signedIn } from "../helpers/dashboard";
import { deps } from "../helpers/dependencies";
import {
  bookingRow,
  createApiKey,
  createBusiness,
  DEFAULT_SHARD,
  insertAll,
  SHARD_D1_BINDING,
  shardD1,
} from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { createOwnerBusiness } from "../helpers/oauth";
import { bookingObject } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { consumeBatch, outboxOnly, subscribe } from "../helpers/webhooks";

/** docs/operations.md, Reading the logs; docs/security.md, Logs. A customer whose details travel in bookings, envelopes and arguments, never in a line. */
const CUSTOMER = { name: "Zelda Quist-Marlowe", email: "zelda.quist@example.org", phone: "+31687654321" };

let log: MockInstance<typeof console.log>;
beforeEach(() => {
  log = vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => log.mockRestore());

/** Everything written to console.log so far, as it was written. */
const written = () => log.mock.calls.map((args) => args.map(String).join(" "));
/** The structured lines of one kind. */
const lines = (kind: string) =>
  written()
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.kind === kind);

function expectNowhere(...secrets: string[]) {
  const all = written().join("\n");
  for (const secret of secrets) expect(all).not.toContain(secret);
}

/** An argument value of an action call: what the Secretary heard from the customer. */
const ARGUMENT = "a table on the terrace for Zelda's birthday";

describe("structured logs", async () => {
  const { business } = await createBusiness();
  const { apiKey, apiKeyId } = await createApiKey(business.id);
  await insertAll(bookings, [
    bookingRow(business.id, { clientName: CUSTOMER.name, clientEmail: CUSTOMER.email, clientPhone: CUSTOMER.phone }),
  ]);

  it("writes one line per request: its id, method, route pattern, principal, status, duration and D1 round trips", async () => {
    const box = receiverBox("logs");
    const created = await call("/api/v1/webhooks", {
      key: apiKey,
      method: "POST",
      body: { url: box.url("/ok"), events: ["booking.created"] },
    });
    await expect(created).toHaveStatus(201);
    const endpoint = await json<{ id: number; secret: string }>(created);
    const counting = countingD1(shardD1);
    const read = await call(`/api/v1/webhooks/${endpoint.id}/deliveries`, {
      key: apiKey,
      bindings: { [SHARD_D1_BINDING]: counting.d1 },
    });
    await expect(read).toHaveStatus(200);
    const list = await call("/api/v1/appointments", { key: apiKey });
    expect(await list.text()).toContain(CUSTOMER.email);

    const [post, get, appointments] = lines("request");
    const principal = { principal: "api_key", principalId: apiKeyId };
    expect(post).toEqual({
      level: "info",
      kind: "request",
      requestId: created.headers.get("X-Request-Id"),
      method: "POST",
      route: "/api/v1/webhooks",
      ...principal,
      status: 201,
      durationMs: expect.any(Number),
      d1RoundTrips: expect.any(Number),
    });
    expect(get).toMatchObject({ method: "GET", route: "/api/v1/webhooks/:id/deliveries", ...principal, status: 200 });
    expect(get?.requestId).toBe(read.headers.get("X-Request-Id"));
    // The count the line gives is the count a wrapper of the whole binding sees (the partner read's one trip).
    expect(get?.d1RoundTrips).toBe(counting.trips.length);
    expect(get?.d1RoundTrips).toBe(1);
    expect(appointments).toMatchObject({ route: "/api/v1/appointments", status: 200 });
    expect(lines("request")).toHaveLength(3);
    expect(written().filter((line) => line.includes(`/webhooks/${endpoint.id}`))).toEqual([]);
    expectNowhere(apiKey, sha256Hex(apiKey), endpoint.secret, box.url(), CUSTOMER.name, CUSTOMER.email, CUSTOMER.phone);
  });

  it.each([
    ["kept: a short safe token", "trace-7f3a_9=", true],
    ["kept: 64 characters", "a".repeat(64), true],
    ["replaced: 65 characters", "a".repeat(65), false],
    ["replaced: a space", "admin logged in", false],
    ["replaced: a slash and a quote", 'a/b"c', false],
    ["replaced: a fake log line", '{"level":"info","kind":"request"}', false],
    ["replaced: a tab", "trace\t7f3a", false],
    ["replaced: a terminal escape", "trace\u001b[2J", false],
    ["replaced: a right-to-left override (U+202E)", "ok\u202Egnp", false],
  ])("takes the caller's X-Request-Id only as a short safe token, %s", async (_case, sent, kept) => {
    const response = await call("/api/v1/me", { key: apiKey, headers: { "X-Request-Id": sent } });
    await expect(response).toHaveStatus(200);
    const echoed = response.headers.get("X-Request-Id");
    if (kept) expect(echoed).toBe(sent);
    else expect(echoed).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const [line] = lines("request").filter((each) => each.requestId === echoed);
    expect(line).toMatchObject({ route: "/api/v1/me", status: 200 });
    if (kept) return;
    expect(lines("request").map((each) => each.requestId)).not.toContain(sent);
    expectNowhere(sent);
  });

  it("logs a refused request (401) without a principal, and 404s by the route's pattern", async () => {
    const noKey = await call("/api/v1/webhooks/424242/deliveries");
    const missing = await call("/api/v1/webhooks/424242/deliveries", { key: apiKey });
    const unmatched = await call("/api/v1/nothing-here/sk_secretish");
    expect([noKey.status, missing.status, unmatched.status]).toEqual([401, 404, 404]);
    expect(lines("request")).toEqual([
      expect.objectContaining({
        route: "/api/v1/webhooks/:id/deliveries",
        principal: null,
        principalId: null,
        status: 401,
      }),
      expect.objectContaining({
        route: "/api/v1/webhooks/:id/deliveries",
        principal: "api_key",
        principalId: apiKeyId,
        status: 404,
      }),
      // Nothing matched: the line names the enclosing middleware's pattern, never the path asked for.
      expect.objectContaining({ route: expect.stringMatching(/\*$/), principal: null, status: 404 }),
    ]);
    expectNowhere("424242", "nothing-here", "sk_secretish", apiKey);
  });

  it("names the owner, by id, as the principal of a dashboard page; never the email or the password signed in with", async () => {
    const owner = await createOwnerBusiness();
    const jar = await signedIn(owner);
    await expect(await page(jar, "/dashboard")).toHaveStatus(200);
    expect(lines("request")).toEqual([
      expect.objectContaining({ method: "GET", route: "/dashboard/sign-in", principal: null, status: 200 }),
      expect.objectContaining({ method: "POST", route: "/dashboard/sign-in", principal: null, status: 303 }),
      expect.objectContaining({ route: "/dashboard", principal: "owner", principalId: owner.owner.id, status: 200 }),
    ]);
    expectNowhere(owner.owner.email, owner.owner.password);
  });

  it("writes one line per batch group, and one per attempt that did not deliver: ids, outcome and duration", async () => {
    const box = receiverBox("logged-delivery");
    const { secret, id: endpointId } = await subscribe(apiKey, box.url("/ok?token=receiver-own-secret"), [
      "booking.created",
    ]);
    const failing = await subscribe(apiKey, box.url("/status/500/"), ["booking.created"]);
    const { deliveryIds } = await outboxOnly(business, [
      { event: "booking.created", data: { booking: bookingObject(7001, { client: CUSTOMER }) } },
    ]);
    const delivered = deliveryIds.at(-2) as number;
    const failed = deliveryIds.at(-1) as number;
    log.mockClear();
    await consumeBatch([delivered, failed, delivered], Date.now());
    expect(lines("delivery_batch")).toEqual([
      {
        level: "info",
        kind: "delivery_batch",
        shard: DEFAULT_SHARD,
        messages: 3,
        attempts: 2,
        delivered: 1,
        durationMs: 0,
        slowestMs: 0,
      },
    ]);
    expect(lines("delivery_attempt")).toEqual([
      {
        level: "info",
        kind: "delivery_attempt",
        deliveryId: failed,
        endpointId: failing.id,
        eventId: expect.stringMatching(/^evt_/),
        attempt: 1,
        ok: false,
        statusCode: 500,
        outcome: "http_error",
        durationMs: 0,
      },
    ]);
    expect(endpointId).not.toBe(failing.id);
    expectNowhere(secret, "receiver-own-secret", box.url(), CUSTOMER.name, CUSTOMER.email, CUSTOMER.phone);
  });

  it("writes one line per action call: call and action ids, outcome and duration, never the arguments", async () => {
    const box = receiverBox("logged-call");
    const created = await call("/api/v1/actions", {
      key: apiKey,
      method: "POST",
      body: {
        name: "note_customer",
        title: "Note the customer",
        description: "Passes on what the customer asked.",
        url: box.url("/ok?token=action-own-secret"),
        parameters: {
          type: "object",
          properties: { note: { type: "string", description: "What the customer asked" } },
          required: ["note"],
        },
      },
    });
    await expect(created).toHaveStatus(201);
    const action = await json<{ id: number; secret: string }>(created);
    await switchAction(deps, business.id, action.id, true);
    log.mockClear();
    const response = await call(`/internal/v1/businesses/${business.id}/actions/note_customer/call`, {
      method: "POST",
      headers: RUNTIME,
      body: {
        conversation_id: "conv-logs",
        message_id: "msg-logs",
        channel: "whatsapp",
        arguments: { note: ARGUMENT },
      },
    });
    await expect(response).toHaveStatus(200);
    const { call: made } = await json<{ call: { id: number } }>(response);
    expect(lines("action_call")).toEqual([
      {
        level: "info",
        kind: "action_call",
        callId: made.id,
        actionId: action.id,
        status: "success",
        httpStatus: 200,
        durationMs: expect.any(Number),
      },
    ]);
    expect(lines("request")).toEqual([
      expect.objectContaining({
        method: "POST",
        route: "/internal/v1/businesses/:id/actions/:name/call",
        principal: "runtime",
        principalId: 1,
        status: 200,
      }),
    ]);
    expectNowhere(business.id, action.secret, "action-own-secret", box.url(), env.RUNTIME_TOKEN, ARGUMENT);
  });
});

describe("an operator's move", () => {
  it("is logged as the operator's, with the token's number and never the token", async () => {
    const { business } = await createBusiness({ shard: "us1" });
    await moved(business.id, "eu1");
    const moves = lines("request").filter((line) => line.route === "/internal/v1/businesses/:id/move");
    expect(moves.length).toBeGreaterThan(0);
    for (const line of moves) expect(line).toMatchObject({ principal: "operator", principalId: 1 });
    expectNowhere(env.OPERATOR_TOKEN);
  });
});
