import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { businesses, events as eventRows } from "../../src/db/schema";
import { SANDBOX_SHARD } from "../../src/db/shards";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { PLATFORM_EVENTS } from "../../src/domain/sandbox/events";
import { MAX_ENDPOINTS_PER_SANDBOX } from "../../src/domain/webhooks/endpoints";
import { EVENT_NAMES } from "../../src/names-and-limits";
import { registerAction } from "../helpers/actions";
import { testDependencies } from "../helpers/dependencies";
import { createBusiness, db, shardDb } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { createIntake, getResponses } from "../helpers/intakes";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import { roundTrips } from "../helpers/round-trips";
import { verifyWebhookSignature } from "../helpers/verify-signature";
import { subscribe } from "../helpers/webhooks";

// docs/decisions.md, Sandbox operations: what a test key of a sandbox business causes under /api/v1/sandbox, delivered
// through the real queue to the test receiver, and what every other credential is refused.

/** What the owner does, in the sandbox database. */
const sandboxDeps = testDependencies(SANDBOX_SHARD);
const sandboxDb = shardDb(SANDBOX_SHARD);

type Emitted = { events: Array<{ id: string; event: string }> };
type Envelope = { id: string; event: string; sandbox?: boolean; data: Record<string, { id: number } & object> };

const emit = (key: string, event: string) => call("/api/v1/sandbox/events", { key, method: "POST", body: { event } });

/** A sandbox business with an endpoint on the receiver subscribed to every event (and intake.completed). */
async function sandboxWithEndpoint(name: string) {
  const { business, apiKey } = await createBusiness({ sandbox: true });
  const box = receiverBox(name);
  const endpoint = await subscribe(apiKey, box.url("/hooks"), ["*", "intake.completed"]);
  /** The delivered envelope of the event `id`, its signature verified with the endpoint's secret. */
  const delivered = async (id: string) => {
    const found = await vi.waitFor(
      async () => {
        const request = (await box.recorded()).find((each) => JSON.parse(each.body).id === id);
        if (!request) throw new Error(`${id} not delivered yet`);
        return request;
      },
      { timeout: 10_000, interval: 100 },
    );
    const signature = found.headers["x-service-signature"] ?? "";
    expect(await verifyWebhookSignature(found.body, signature, endpoint.secret)).toBe(true);
    return JSON.parse(found.body) as Envelope;
  };
  return { business, apiKey, box, delivered };
}

describe("POST /api/v1/sandbox/events", async () => {
  const sandbox = await sandboxWithEndpoint("sandbox-events");

  it("booking.created: a new booking, delivered signed with sandbox: true, and read as the event carried it", async () => {
    const response = await emit(sandbox.apiKey, "booking.created");
    await expect(response).toHaveStatus(201);
    const { events } = await json<Emitted>(response);
    expect(events).toEqual([{ id: expect.stringMatching(/^evt_/), event: "booking.created" }]);
    const envelope = await sandbox.delivered(events[0]?.id ?? "");
    expect(envelope).toMatchObject({ event: "booking.created", sandbox: true });
    const booking = envelope.data.booking;
    // The upper half of the legacy shard's id range (docs/decisions.md, Sandbox operations).
    expect(booking?.id).toBeGreaterThan(2 ** 39);
    const read = await call(`/api/v1/appointments/${booking?.id}`, { key: sandbox.apiKey });
    expect(await json(read)).toEqual(booking);
  });

  it("order.ready: an order ready for pickup, read as the event carried it", async () => {
    const { events } = await json<Emitted>(await emit(sandbox.apiKey, "order.ready"));
    const ready = events.at(-1);
    expect(ready?.event).toBe("order.ready");
    const envelope = await sandbox.delivered(ready?.id ?? "");
    expect(envelope.sandbox).toBe(true);
    expect(envelope.data.order).toMatchObject({ status: "ready_for_pickup", fulfillment_type: "pickup" });
    const read = await call(`/api/v1/orders/${envelope.data.order?.id}`, { key: sandbox.apiKey });
    expect(await json(read)).toEqual(envelope.data.order);
  });

  it("booking.cancelled: cancels the upcoming booking the business has", async () => {
    const { business, apiKey } = await createBusiness({ sandbox: true });
    const [created] = (await json<Emitted>(await emit(apiKey, "booking.created"))).events;
    const response = await emit(apiKey, "booking.cancelled");
    const { events } = await json<Emitted>(response);
    expect(events.map((each) => each.event)).toEqual(["booking.cancelled"]);
    const [createdRow, cancelledRow] = await Promise.all(
      [created?.id, events[0]?.id].map((id) =>
        sandboxDb
          .select()
          .from(eventRows)
          .where(eq(eventRows.id, id ?? ""))
          .get(),
      ),
    );
    const bookingOf = (row: typeof createdRow) => JSON.parse(row?.envelope ?? "{}").data.booking;
    expect(bookingOf(cancelledRow).id).toBe(bookingOf(createdRow).id);
    const read = await json<{ status: string }>(
      await call(`/api/v1/appointments/${bookingOf(createdRow).id}`, { key: apiKey }),
    );
    expect(read.status).toBe("cancelled");
    expect(cancelledRow?.businessId).toBe(business.id);
  });

  it("a change with nothing to change reports the booking first", async () => {
    const { apiKey } = await createBusiness({ sandbox: true });
    const { events } = await json<Emitted>(await emit(apiKey, "booking.rescheduled"));
    expect(events.map((each) => each.event)).toEqual(["booking.created", "booking.rescheduled"]);
  });

  it.each(PLATFORM_EVENTS)("%s: emitted, with sandbox: true in the stored envelope", async (event) => {
    const { apiKey } = await createBusiness({ sandbox: true });
    const response = await emit(apiKey, event);
    await expect(response).toHaveStatus(201);
    const { events } = await json<Emitted>(response);
    expect(events.at(-1)?.event).toBe(event);
    const listed = await json<{ data: Envelope[] }>(await call(`/api/v1/events?type=${event}`, { key: apiKey }));
    expect(listed.data[0]).toMatchObject({ id: events.at(-1)?.id, sandbox: true });
  });

  it("covers every event name: those it emits and those it refuses", () => {
    const refused = EVENT_NAMES.filter((event) => !PLATFORM_EVENTS.includes(event));
    expect(refused.sort()).toEqual(
      [
        "action.change_accepted",
        "action.disabled",
        "action.enabled",
        "app.connected",
        "app.disconnected",
        "intake.completed",
        "intake.disabled",
        "intake.enabled",
        "ping",
      ].sort(),
    );
  });

  it.each([
    ["intake.completed", /POST \/sandbox\/intakes\/\{id\}\/conversations/],
    ["ping", /POST \/webhooks\/\{id\}\/test/],
    ["action.enabled", /switches it in the dashboard/],
    ["intake.disabled", /POST \/webhooks\/\{id\}\/test/],
    ["app.disconnected", /when an owner disconnects your app/],
  ])("%s: 400 saying how to get it", async (event, how) => {
    await expectError(await emit(sandbox.apiKey, event), 400, how, { code: "parameter_invalid", param: "event" });
  });

  it("an unknown event name: 400 parameter_invalid", async () => {
    await expectError(await emit(sandbox.apiKey, "booking.exploded"), 400, /not an event name/, {
      code: "parameter_invalid",
      param: "event",
    });
  });

  it(`reaches all ${MAX_ENDPOINTS_PER_SANDBOX} endpoints a sandbox may have, each signed with its own secret`, async () => {
    const { apiKey } = await createBusiness({ sandbox: true });
    const box = receiverBox("sandbox-fan-out");
    const endpoints = await Promise.all(
      Array.from({ length: MAX_ENDPOINTS_PER_SANDBOX }, (_, n) => subscribe(apiKey, box.url(`/${n}`))),
    );
    // A smaller fan-out than a live business's 20: one more is refused.
    const sixth = await call("/api/v1/webhooks", { key: apiKey, method: "POST", body: { url: box.url("/6") } });
    await expectError(
      sixth,
      403,
      "A sandbox business can have at most 5 webhook endpoints: delete one before adding another.",
      {
        code: "limit_reached",
      },
    );
    const { events } = await json<Emitted>(await emit(apiKey, "booking.created"));
    const requests = await box.arrived(MAX_ENDPOINTS_PER_SANDBOX, 20_000);
    expect(requests).toHaveLength(MAX_ENDPOINTS_PER_SANDBOX);
    for (const [n, endpoint] of endpoints.entries()) {
      const request = requests.find((each) => each.path.endsWith(`/${n}`));
      expect(request, `endpoint ${n}`).toBeDefined();
      const body = request?.body ?? "";
      expect(await verifyWebhookSignature(body, request?.headers["x-service-signature"] ?? "", endpoint.secret)).toBe(
        true,
      );
      expect(JSON.parse(body)).toMatchObject({ id: events[0]?.id, event: "booking.created", sandbox: true });
    }
  });

  it("makes the credential's round trip, then reportChange's two", async () => {
    await call("/api/v1/me", { key: sandbox.apiKey });
    const { response, trips } = await roundTrips("/api/v1/sandbox/events", {
      key: sandbox.apiKey,
      method: "POST",
      body: { event: "order.created" },
      shard: SANDBOX_SHARD,
    });
    await expect(response).toHaveStatus(201);
    expect(trips, trips.join(" | ")).toHaveLength(3);
  });
});

describe("a live business's envelope", () => {
  it("has no sandbox member", async () => {
    const { apiKey } = await createBusiness();
    const endpoint = await subscribe(apiKey, "https://partner.example/hooks");
    await call(`/api/v1/webhooks/${endpoint.id}/test`, { key: apiKey, method: "POST", body: {} });
    const listed = await json<{ data: Envelope[] }>(await call("/api/v1/events", { key: apiKey }));
    expect(listed.data.length).toBeGreaterThan(0);
    for (const envelope of listed.data) expect(Object.keys(envelope)).not.toContain("sandbox");
  });
});

describe("POST /api/v1/sandbox/intakes/{id}/conversations", async () => {
  const sandbox = await sandboxWithEndpoint("sandbox-intake");
  const intake = await createIntake(sandbox.apiKey);
  await switchIntakeOn(sandboxDeps, sandbox.business.id, intake.id);
  const converse = (id: number, body: unknown, key = sandbox.apiKey) =>
    call(`/api/v1/sandbox/intakes/${id}/conversations`, { key, method: "POST", body });
  const ANSWERS = { full_name: "Noor Haddad", email: "noor@example.com", budget: "5k to 20k" };

  it("runs the conversation: the response is stored, and intake.completed delivered with sandbox: true", async () => {
    const response = await converse(intake.id, { answers: ANSWERS, channel: "email" });
    await expect(response).toHaveStatus(201);
    const body = await json<{ response_id: number; conversation: { id: string }; answers: unknown[] }>(response);
    expect(body).toMatchObject({
      intake: { id: intake.id, name: intake.name, title: intake.title },
      conversation: { id: expect.stringMatching(/^sandbox_conv_/), channel: "email" },
      answers: [
        { id: "full_name", value: "Noor Haddad" },
        // The synthetic customer writes from the address they give: the email channel proves it.
        { id: "email", value: "noor@example.com", proof: "verified" },
        { id: "budget", value: "5k to 20k" },
      ],
    });
    const page = await json<{ data: Array<{ id: number; answers: unknown[] }> }>(
      await getResponses(sandbox.apiKey, intake.id),
    );
    expect(page.data.find((stored) => stored.id === body.response_id)?.answers).toEqual(body.answers);
    const listed = await json<{ data: Envelope[] }>(
      await call("/api/v1/events?type=intake.completed", { key: sandbox.apiKey }),
    );
    const envelope = await sandbox.delivered(listed.data[0]?.id ?? "");
    expect(envelope).toMatchObject({
      event: "intake.completed",
      sandbox: true,
      data: { response_id: body.response_id },
    });
  });

  it("an answer the intake refuses: 400 naming it, nothing stored", async () => {
    const before = await json<{ data: unknown[] }>(await getResponses(sandbox.apiKey, intake.id));
    await expectError(
      await converse(intake.id, { answers: { ...ANSWERS, email: "not an address" } }),
      400,
      /answers\.email/,
      { code: "parameter_invalid", param: "answers.email" },
    );
    await expectError(await converse(intake.id, { answers: { full_name: "Noor" } }), 400, /answers\.email/, {
      code: "parameter_missing",
      param: "answers.email",
    });
    const after = await json<{ data: unknown[] }>(await getResponses(sandbox.apiKey, intake.id));
    expect(after.data).toHaveLength(before.data.length);
  });

  it("an intake switched off: 409; another key's: 404", async () => {
    const off = await createIntake(sandbox.apiKey);
    await expectError(await converse(off.id, { answers: ANSWERS }), 409, /owner switches it on in the dashboard/, {
      code: "invalid_state",
    });
    const other = await createBusiness({ sandbox: true });
    await expectError(await converse(intake.id, { answers: ANSWERS }, other.apiKey), 404, /No intake/);
  });
});

describe("POST /api/v1/sandbox/actions/{id}/calls", async () => {
  const { business, apiKey } = await createBusiness({ sandbox: true });
  const box = receiverBox("sandbox-action");
  const created = await registerAction(apiKey, "check_stock", {
    url: box.url("/ok"),
    parameters: {
      type: "object",
      properties: { sku: { type: "string", description: "The product code" } },
      required: ["sku"],
    },
  });
  const callIt = (id: number, body: unknown) =>
    call(`/api/v1/sandbox/actions/${id}/calls`, { key: apiKey, method: "POST", body });

  it("switched off: 409", async () => {
    await expectError(await callIt(created.id, { arguments: {} }), 409, /owner switches it on/, {
      code: "invalid_state",
    });
  });

  it("calls the action as the Secretary does: signed, answered, recorded in its calls", async () => {
    await switchAction(sandboxDeps, business.id, created.id, true);
    const response = await callIt(created.id, { arguments: { sku: "LOAF-2" } });
    await expect(response).toHaveStatus(200);
    const body = await json<{ call: { id: number; status: string }; result: { content: string } | null }>(response);
    expect(body.call).toMatchObject({ status: "success", arguments: { sku: "LOAF-2" } });
    expect(body.result?.content).toBe('{"ok":true}');
    const [request] = await box.arrived(1);
    expect(
      await verifyWebhookSignature(request?.body ?? "", request?.headers["x-service-signature"] ?? "", created.secret),
    ).toBe(true);
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({
      call_id: body.call.id,
      conversation: { id: expect.stringMatching(/^sandbox_conv_/), channel: "chat_page" },
    });
    const action = await json<{ calls: Array<{ id: number }> }>(
      await call(`/api/v1/actions/${created.id}`, { key: apiKey }),
    );
    expect(action.calls.map((each) => each.id)).toContain(body.call.id);
  });

  it("another business's action: 404", async () => {
    const other = await createBusiness({ sandbox: true });
    const response = await call(`/api/v1/sandbox/actions/${created.id}/calls`, {
      key: other.apiKey,
      method: "POST",
      body: { arguments: {} },
    });
    await expectError(response, 404, /No action/);
  });
});

describe("who may use /api/v1/sandbox", async () => {
  const live = await createBusiness();
  const FORBIDDEN = /test key \(sk_test_…\) of a sandbox business/;
  const ROUTES = [
    ["/api/v1/sandbox/events", { event: "booking.created" }],
    ["/api/v1/sandbox/intakes/1/conversations", { answers: {} }],
    ["/api/v1/sandbox/actions/1/calls", { arguments: {} }],
  ] as const;

  it.each(ROUTES)("%s: a live key gets 403 forbidden, even with a body or id that is wrong", async (path, body) => {
    await expectError(await call(path, { key: live.apiKey, method: "POST", body }), 403, FORBIDDEN, {
      code: "forbidden",
    });
    await expectError(await call(path, { key: live.apiKey, method: "POST", body: { nothing: 1 } }), 403, FORBIDDEN);
    const unknownId = path.replace("/1/", "/999999999/");
    await expectError(await call(unknownId, { key: live.apiKey, method: "POST", body }), 403, FORBIDDEN);
  });

  it("an OAuth access token of a sandbox business gets 403 forbidden", async () => {
    const owner = await createOwnerBusiness();
    const { tokens } = await connectApp(owner);
    // The app connected while the business was live; made a sandbox since, its token is still not a test key.
    await db.update(businesses).set({ sandbox: true }).where(eq(businesses.id, owner.business.id));
    for (const [path, body] of ROUTES) {
      const response = await call(path, { key: tokens.access_token, method: "POST", body });
      await expectError(response, 403, FORBIDDEN, { code: "forbidden" });
    }
  });
});
