import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events, webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import { SENDS_PER_HOUR, TEST_EVENTS_PER_HOUR } from "../../src/domain/webhooks/endpoint-budgets";
import { SAMPLE_DATA } from "../../src/domain/webhooks/samples";
import { EVENT_NAMES } from "../../src/names-and-limits";
import { ActionObject } from "../../src/schemas/actions";
import { BookingObject } from "../../src/schemas/booking";
import { AnswerObject } from "../../src/schemas/intake-responses";
import { IntakeObject } from "../../src/schemas/intakes";
import { OrderObject } from "../../src/schemas/order";
import { OTHER_CHANGES } from "../../src/schemas/platform-changes";
import { createApiKey, createBusiness, db } from "../helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "../helpers/http";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";
import { receiverBox } from "../helpers/receiver";
import { roundTrips } from "../helpers/round-trips";
import { verifyWebhookSignature } from "../helpers/verify-signature";
import { subscribe } from "../helpers/webhooks";

// docs/webhooks.md, Test events. `POST /webhooks/{id}/test` `{ "event": name }` (default `ping`)
// → 202 `{ event_id }`: a signed sample of that event, `"test": true` in its envelope, to that endpoint only, through
// the queue like any delivery; counted with redeliveries, and per business.

const HOUR = 3_600_000;
const testPath = (endpointId: number | string) => `/api/v1/webhooks/${endpointId}/test`;
const sendTest = (key: string, endpointId: number | string, body?: unknown) =>
  call(testPath(endpointId), { key, method: "POST", body });

/** Each sample, checked by the schema its part is validated with elsewhere: nothing missing, nothing left over. */
const same = (schema: { parse(value: unknown): unknown }, value: unknown) => expect(schema.parse(value)).toEqual(value);

describe("the samples", () => {
  // docs/guides/webhooks.md, The events; docs/webhooks.md, Lifecycle events: the members of each event's data.
  const MEMBERS: Record<(typeof EVENT_NAMES)[number], string[]> = {
    "booking.created": ["booking"],
    "booking.rescheduled": ["booking", "previous"],
    "booking.cancelled": ["booking", "cancelled_by", "reason"],
    "booking.completed": ["booking"],
    "order.created": ["order"],
    "order.preparing": ["order"],
    "order.ready": ["order"],
    "order.dispatched": ["order"],
    "order.fulfilled": ["order"],
    "order.cancelled": ["order", "reason"],
    "payment.received": ["kind", "amount", "currency", "reference", "booking"],
    "lead.created": ["lead"],
    "review.created": ["review"],
    ping: ["message"],
    "intake.completed": ["intake", "response_id", "conversation", "answers", "completed_at"],
    "action.enabled": ["action", "reason"],
    "action.disabled": ["action", "reason"],
    "action.change_accepted": ["action"],
    "intake.enabled": ["intake", "reason"],
    "intake.disabled": ["intake", "reason"],
    "app.connected": ["connected_at"],
    "app.disconnected": ["disconnected_at"],
  };

  it.each(EVENT_NAMES)("has data of the documented shape for %s", (event) => {
    const data = SAMPLE_DATA[event];
    expect(Object.keys(data)).toEqual(MEMBERS[event]);
    if (data.booking) same(BookingObject, data.booking);
    if (data.order) same(OrderObject, data.order);
    if (event in OTHER_CHANGES) same(OTHER_CHANGES[event as keyof typeof OTHER_CHANGES], { event, data });
    if (event === "booking.rescheduled") {
      expect(data.previous).toEqual({ date: "2026-12-03", time: "15:00" });
      expect(data.booking).toMatchObject({ reschedule_count: 1, original_date: "2026-12-03", original_time: "15:00" });
    }
    if (event.startsWith("booking.") && event !== "booking.created" && event !== "booking.rescheduled") {
      expect(data.booking).toMatchObject({ status: event.slice("booking.".length) });
    }
    if (event === "intake.completed") {
      for (const answer of data.answers as unknown[]) same(AnswerObject, answer);
      expect(data.intake).toEqual({ id: 7, name: "quote_request", title: "Quote request" });
    }
    if (event.startsWith("action.")) same(ActionObject, data.action);
    if (event.startsWith("intake.") && event !== "intake.completed") same(IntakeObject, data.intake);
    if (data.reason !== undefined && /^(action|intake)\./.test(event)) {
      expect(["owner", "changed", "credential_revoked"]).toContain(data.reason);
      expect(data[event.split(".")[0] ?? ""]).toMatchObject({ enabled: event.endsWith(".enabled") });
    }
  });

  it("names each order event by the status it reports", () => {
    const statusOf = (event: (typeof EVENT_NAMES)[number]) => (SAMPLE_DATA[event].order as { status: string }).status;
    expect(
      (
        [
          "order.created",
          "order.preparing",
          "order.ready",
          "order.dispatched",
          "order.fulfilled",
          "order.cancelled",
        ] as const
      ).map(statusOf),
    ).toEqual(["pending", "preparing", "ready_for_pickup", "out_for_delivery", "fulfilled", "cancelled"]);
  });
});

describe("POST /webhooks/{id}/test", async () => {
  const owner = await createOwnerBusiness({ name: "Bella Hair Studio" });
  const { business, apiKey } = owner;
  const box = receiverBox("test-events");
  const endpoint = await subscribe(apiKey, box.url("/hooks"), ["order.created"]);
  // Subscribed to everything: a test event to another endpoint must not reach it.
  const bystander = receiverBox("bystander");
  await subscribe(apiKey, bystander.url("/hooks"));

  it("sends a signed sample of every event name, marked test, to that endpoint only, through the queue", async () => {
    const sent = new Map<string, string>();
    for (const event of EVENT_NAMES) {
      const response = await sendTest(apiKey, endpoint.id, { event });
      await expect(response).toHaveStatus(202);
      const { event_id } = await json<{ event_id: string }>(response);
      expect(event_id).toMatch(/^evt_/);
      sent.set(event_id, event);
    }
    expect(sent.size).toBe(EVENT_NAMES.length);
    const requests = await box.arrived(EVENT_NAMES.length, 15_000);
    expect(requests).toHaveLength(EVENT_NAMES.length);
    for (const request of requests) {
      const envelope = JSON.parse(request.body);
      const event = sent.get(envelope.id);
      expect(event, `an envelope of an event that was not sent: ${envelope.id}`).toBeDefined();
      expect(envelope).toEqual({
        id: envelope.id,
        event,
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
        business: { id: business.id, handle: business.handle, name: "Bella Hair Studio" },
        data: SAMPLE_DATA[event as (typeof EVENT_NAMES)[number]],
        test: true,
      });
      expect(request.headers["x-service-event"]).toBe(event);
      expect(
        await verifyWebhookSignature(request.body, request.headers["x-service-signature"] ?? "", endpoint.secret),
      ).toBe(true);
    }
    // Each one a delivery of that endpoint, in its history.
    const deliveries = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id));
    expect(new Set(deliveries.map((delivery) => delivery.eventId))).toEqual(new Set(sent.keys()));
    expect(await bystander.recorded()).toEqual([]);
  });

  it("sends a ping when the body, or its event, is left out", async () => {
    const pingBox = receiverBox("ping");
    const pinged = await subscribe(apiKey, pingBox.url("/hooks"), ["lead.created"]);
    for (const response of [await sendTest(apiKey, pinged.id), await sendTest(apiKey, pinged.id, {})]) {
      await expect(response).toHaveStatus(202);
    }
    const requests = await pingBox.arrived(2);
    for (const request of requests) {
      expect(JSON.parse(request.body)).toMatchObject({ event: "ping", data: SAMPLE_DATA.ping, test: true });
    }
  });

  it.each([
    [
      { event: "booking.moved" },
      'The field "event" is "booking.moved", which is not an event name (GET /webhooks lists them).',
    ],
    [{ event: "*" }, 'The field "event" is "*", which is not an event name (GET /webhooks lists them).'],
    [{ event: 5 }, 'The field "event" must be an event name.'],
    [{ event: null }, 'The field "event" must be an event name.'],
  ])("refuses %o with a 400 naming the field, and sends nothing", async (body, sentence) => {
    const before = await db.$count(webhookDeliveries, eq(webhookDeliveries.businessId, business.id));
    await expectError(await sendTest(apiKey, endpoint.id, body), 400, sentence);
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.businessId, business.id))).toBe(before);
  });

  it("lists the test event to the endpoint's side in the Events API, marked test, and to no other side", async () => {
    const app = await connectApp(owner);
    const appEndpoint = await subscribe(app.tokens.access_token, "https://partner.example/app-hooks", ["lead.created"]);
    const ofTheKeys = (await json<{ event_id: string }>(await sendTest(apiKey, endpoint.id, { event: "lead.created" })))
      .event_id;
    const ofTheApp = (
      await json<{ event_id: string }>(
        await sendTest(app.tokens.access_token, appEndpoint.id, { event: "intake.completed" }),
      )
    ).event_id;
    const secondKey = await createApiKey(business.id);

    for (const key of [apiKey, secondKey.apiKey]) {
      const found = await call(`/api/v1/events/${ofTheKeys}`, { key });
      await expect(found).toHaveStatus(200);
      expect(await json(found)).toMatchObject({ id: ofTheKeys, event: "lead.created", test: true });
      await expectError(
        await call(`/api/v1/events/${ofTheApp}`, { key }),
        404,
        "No event with that id exists for this credential.",
      );
    }
    const listed = await json<{ data: Array<{ id: string }> }>(
      await call("/api/v1/events?type=intake.completed", { key: app.tokens.access_token }),
    );
    expect(listed.data.map((envelope) => envelope.id)).toEqual([ofTheApp]);
    await expectError(
      await call(`/api/v1/events/${ofTheKeys}`, { key: app.tokens.access_token }),
      404,
      "No event with that id exists for this credential.",
    );
  });

  it("answers another side's or business's endpoint with the 404 of a missing one, sending nothing", async () => {
    const app = await connectApp(owner);
    const other = await createBusiness();
    const theirs = await subscribe(other.apiKey, "https://partner.example/theirs", ["lead.created"]);
    for (const [key, id] of [
      [app.tokens.access_token, endpoint.id],
      [apiKey, theirs.id],
      [apiKey, "abc"],
      [apiKey, 999_999_999],
    ] as const) {
      await expectError(
        await sendTest(key, id, { event: "ping" }),
        404,
        "No webhook endpoint with that id exists for this business.",
      );
    }
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, theirs.id))).toBe(0);
  });

  it("answers 409 for a disabled endpoint", async () => {
    const disabled = await subscribe(apiKey, "https://partner.example/disabled", ["lead.created"]);
    await db.update(webhookEndpoints).set({ status: "disabled" }).where(eq(webhookEndpoints.id, disabled.id));
    await expectError(
      await sendTest(apiKey, disabled.id, { event: "ping" }),
      409,
      "The webhook endpoint is disabled: nothing is sent to it until it is enabled again.",
    );
  });

  it(`counts with redeliveries: ${SENDS_PER_HOUR} an hour per endpoint, then 429 for both`, async () => {
    // A business of its own: its test events are counted per business too (below).
    const { apiKey } = await createBusiness();
    const budgetBox = receiverBox("test-budget");
    const busy = await subscribe(apiKey, budgetBox.url("/ok"), ["lead.created"]);
    await awayFromWindowEdge(10_000, HOUR);
    const answers = await Promise.all(
      Array.from({ length: SENDS_PER_HOUR + 5 }, () => sendTest(apiKey, busy.id, { event: "ping" })),
    );
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(SENDS_PER_HOUR);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(5);
    const retryAfter = refused[0]?.headers.get("Retry-After");
    expect(retryAfter).toMatch(/^\d+$/);
    // Both budgets are spent by the same 60: the endpoint's, checked first, is the one named.
    expect(refused[0]?.headers.get("RateLimit-Policy")).toBe(
      `"requests";q=600;w=60, "webhook_sends";q=${SENDS_PER_HOUR};w=3600`,
    );
    expect(refused[0]?.headers.get("RateLimit")).toBe(`"webhook_sends";r=0;t=${retryAfter}`);
    const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, busy.id));
    await expectError(
      await call(`/api/v1/webhooks/${busy.id}/deliveries/${delivery?.id}/redeliver`, { key: apiKey, method: "POST" }),
      429,
      `A webhook endpoint can be sent at most ${SENDS_PER_HOUR} redeliveries and test events an hour; try again when the hour is up.`,
    );
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, busy.id))).toBe(SENDS_PER_HOUR);
  });

  it(`counts ${TEST_EVENTS_PER_HOUR} test events an hour per business: re-creating the endpoint does not start again`, async () => {
    const { business, apiKey } = await createBusiness();
    const budgetBox = receiverBox("test-budget-business");
    const url = budgetBox.url("/ok");
    const first = await subscribe(apiKey, url, ["lead.created"]);
    await awayFromWindowEdge(15_000, HOUR);
    const before = await Promise.all(Array.from({ length: 40 }, () => sendTest(apiKey, first.id, { event: "ping" })));
    expect(before.map((answer) => answer.status)).toEqual(Array(40).fill(202));
    await expect(await call(`/api/v1/webhooks/${first.id}`, { key: apiKey, method: "DELETE" })).toHaveStatus(204);

    // The same URL again: a new endpoint, with its own redelivery budget, but the business's test events go on.
    const again = await subscribe(apiKey, url, ["lead.created"]);
    expect(again.id).not.toBe(first.id);
    const next = await sendTest(apiKey, again.id, { event: "ping" });
    await expect(next).toHaveStatus(202);
    // Both budgets it was counted against are announced: the new endpoint's sends, and the business's test events.
    expect(next.headers.get("RateLimit-Policy")).toBe(
      `"requests";q=600;w=60, "webhook_sends";q=${SENDS_PER_HOUR};w=3600, "webhook_tests";q=${TEST_EVENTS_PER_HOUR};w=3600`,
    );
    expect(next.headers.get("RateLimit")).toMatch(
      new RegExp(
        `^"webhook_sends";r=${SENDS_PER_HOUR - 1};t=\\d+, "webhook_tests";r=${TEST_EVENTS_PER_HOUR - 41};t=\\d+$`,
      ),
    );
    const rest = await Promise.all(
      Array.from({ length: TEST_EVENTS_PER_HOUR - 41 + 5 }, () => sendTest(apiKey, again.id, { event: "ping" })),
    );
    expect(rest.filter((answer) => answer.status === 202)).toHaveLength(TEST_EVENTS_PER_HOUR - 41);
    const refused = rest.find((answer) => answer.status === 429);
    const sentence = `A business's webhook endpoints can be sent at most ${TEST_EVENTS_PER_HOUR} test events an hour together; try again when the hour is up.`;
    const retryAfter = refused?.headers.get("Retry-After");
    expect(retryAfter).toMatch(/^\d+$/);
    // A refusal names only the policy that is spent.
    expect(refused?.headers.get("RateLimit-Policy")).toBe(
      `"requests";q=600;w=60, "webhook_tests";q=${TEST_EVENTS_PER_HOUR};w=3600`,
    );
    expect(refused?.headers.get("RateLimit")).toBe(`"webhook_tests";r=0;t=${retryAfter}`);
    await expectError(refused as Response, 429, sentence, { code: "rate_limited", param: undefined });

    // Any other endpoint of the business is refused too; one of another business is not.
    const another = await subscribe(apiKey, budgetBox.url("/other"), ["lead.created"]);
    await expectError(await sendTest(apiKey, another.id, { event: "ping" }), 429, sentence);
    const stranger = await createBusiness();
    const theirs = await subscribe(stranger.apiKey, budgetBox.url("/theirs"), ["lead.created"]);
    await expect(await sendTest(stranger.apiKey, theirs.id, { event: "ping" })).toHaveStatus(202);

    // Only the accepted ones were written; the re-created endpoint keeps the redeliveries the test events left it.
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, again.id))).toBe(
      TEST_EVENTS_PER_HOUR - 40,
    );
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, another.id))).toBe(0);
    // Every accepted test event is stored (the deleted endpoint's deliveries went with it, its events stay).
    expect(await db.$count(events, and(eq(events.businessId, business.id), eq(events.type, "ping")))).toBe(
      TEST_EVENTS_PER_HOUR,
    );
    const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, again.id));
    const redelivered = await call(`/api/v1/webhooks/${again.id}/deliveries/${delivery?.id}/redeliver`, {
      key: apiKey,
      method: "POST",
    });
    await expect(redelivered).toHaveStatus(202);
    expect(redelivered.headers.get("RateLimit-Policy")).toBe(
      `"requests";q=600;w=60, "webhook_sends";q=${SENDS_PER_HOUR};w=3600`,
    );
    expect(redelivered.headers.get("RateLimit")).toMatch(
      new RegExp(`^"webhook_sends";r=${SENDS_PER_HOUR - (TEST_EVENTS_PER_HOUR - 40) - 1};t=\\d+$`),
    );
  });

  it("spends nothing of the business's test events when the endpoint's own budget refuses one", async () => {
    const { apiKey } = await createBusiness();
    const budgetBox = receiverBox("test-budget-all-or-none");
    const busy = await subscribe(apiKey, budgetBox.url("/busy"), ["lead.created"]);
    const quiet = await subscribe(apiKey, budgetBox.url("/quiet"), ["lead.created"]);
    await awayFromWindowEdge(15_000, HOUR);
    await expect(await sendTest(apiKey, busy.id, { event: "ping" })).toHaveStatus(202);
    const [delivery] = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, busy.id));
    const redeliveries = await Promise.all(
      Array.from({ length: SENDS_PER_HOUR - 1 }, () =>
        call(`/api/v1/webhooks/${busy.id}/deliveries/${delivery?.id}/redeliver`, { key: apiKey, method: "POST" }),
      ),
    );
    expect(redeliveries.every((answer) => answer.status === 202)).toBe(true);
    for (let i = 0; i < 3; i++) {
      await expectError(
        await sendTest(apiKey, busy.id, { event: "ping" }),
        429,
        `A webhook endpoint can be sent at most ${SENDS_PER_HOUR} redeliveries and test events an hour; try again when the hour is up.`,
      );
    }
    const elsewhere = await sendTest(apiKey, quiet.id, { event: "ping" });
    await expect(elsewhere).toHaveStatus(202);
    // One test event before, this one now: the three refused were not counted.
    expect(elsewhere.headers.get("RateLimit")).toMatch(
      new RegExp(
        `^"webhook_sends";r=${SENDS_PER_HOUR - 1};t=\\d+, "webhook_tests";r=${TEST_EVENTS_PER_HOUR - 2};t=\\d+$`,
      ),
    );
  });

  it("makes two D1 round trips, with an API key and with an access token", async () => {
    const app = await connectApp(owner);
    for (const key of [apiKey, app.tokens.access_token]) {
      const target = await subscribe(key, receiverBox("test-trips").url("/ok"), ["lead.created"]);
      await call("/api/v1/me", { key });
      const { response, trips } = await roundTrips(testPath(target.id), {
        key,
        method: "POST",
        body: { event: "booking.created" },
      });
      await expect(response).toHaveStatus(202);
      expect(trips).toHaveLength(2);
    }
  });

  it("answers 401 without a credential or with a revoked one, before any 400 or 404", async () => {
    const revoked = await createApiKey(business.id, { revoked: true });
    await expectMissingCredential(await sendTest("", endpoint.id, { event: "ping" }));
    await expectError(await sendTest(revoked.apiKey, endpoint.id, { event: "nope" }), 401, /revoked/);
    await expectError(await sendTest(revoked.apiKey, "abc", { event: "ping" }), 401, /revoked/);
  });
});
