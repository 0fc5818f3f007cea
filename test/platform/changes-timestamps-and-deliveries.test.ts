import { exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { events, webhookDeliveries } from "../../src/db/schema";
import { createBusiness, db } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { reportChange } from "../helpers/platform";
import {
  appointment,
  eventCount,
  expectEmitted,
  expectNothingEmitted,
  newBooking,
  newOrder,
  order,
  storedEnvelope,
} from "../helpers/platform-changes";
import { receiverBox } from "../helpers/receiver";

describe("POST /internal/v1/businesses/{id}/events: timestamps (docs/decisions.md, Events from the core platform)", async () => {
  const { business, apiKey } = await createBusiness();
  const NOT_ZONED = "must be an ISO 8601 date and time with its time zone, such as 2026-11-22T10:30:00+01:00.";
  const lead = (created_at: unknown) => ({
    event: "lead.created",
    data: { lead: { id: 1, name: null, contact: null, message: null, source: null, created_at } },
  });
  const review = (submitted_at: unknown) => ({
    event: "review.created",
    data: { review: { id: 2, rating: 4, body: null, client_name: null, status: "new", submitted_at } },
  });

  it("stores a booking's +02:00 created_at as the UTC instant with milliseconds, served so by GET /appointments", async () => {
    const booking = newBooking({ created_at: "2026-11-20T11:30:00+02:00" });
    const [created] = await expectEmitted(business.id, { booking }, ["booking.created"]);
    const utc = { ...booking, created_at: "2026-11-20T09:30:00.000Z" };
    expect(await appointment(apiKey, booking.id)).toEqual(utc);
    expect(await storedEnvelope(business, created)).toEqual({ booking: utc });
    // The same instant written another way is the same snapshot: nothing changed, nothing is emitted.
    await expectNothingEmitted(business.id, { booking: { ...booking, created_at: "2026-11-20T09:30:00Z" } });
  });

  it("normalises an order's created_at, ready_at and estimated_ready_at, fractions and negative offsets included", async () => {
    const placed = newOrder({
      status: "ready_for_pickup",
      created_at: "2026-11-21T12:00:00Z",
      ready_at: "2026-11-21T10:55:00.5-05:00",
      estimated_ready_at: "2026-11-21T15:45:00.123456+00:00",
    });
    await expectEmitted(business.id, { order: placed }, ["order.created"]);
    expect(await order(apiKey, placed.id)).toEqual({
      ...placed,
      created_at: "2026-11-21T12:00:00.000Z",
      ready_at: "2026-11-21T15:55:00.500Z",
      estimated_ready_at: "2026-11-21T15:45:00.123Z",
    });
  });

  it("sends a lead's created_at and a review's submitted_at on in UTC with milliseconds", async () => {
    const [leadEvent] = await expectEmitted(business.id, lead("2026-11-22T15:30:00+05:30"), ["lead.created"]);
    expect(await storedEnvelope(business, leadEvent)).toMatchObject({
      lead: { created_at: "2026-11-22T10:00:00.000Z" },
    });
    const [reviewEvent] = await expectEmitted(business.id, review("2026-11-22T08:00:00-03:00"), ["review.created"]);
    expect(await storedEnvelope(business, reviewEvent)).toMatchObject({
      review: { submitted_at: "2026-11-22T11:00:00.000Z" },
    });
  });

  const reports: Array<[string, (value: unknown) => unknown]> = [
    ["booking.created_at", (created_at) => ({ booking: newBooking({ created_at: created_at as string }) })],
    ["order.created_at", (created_at) => ({ order: newOrder({ created_at: created_at as string }) })],
    ["order.ready_at", (ready_at) => ({ order: newOrder({ ready_at: ready_at as string }) })],
    ["order.estimated_ready_at", (at) => ({ order: newOrder({ estimated_ready_at: at as string }) })],
    ["data.lead.created_at", lead],
    ["data.review.submitted_at", review],
  ];
  const refusedValues: Array<[string, string]> = [
    ["yesterday-ish", NOT_ZONED],
    ["2026-11-20", NOT_ZONED],
    ["2026-11-20T09:30:00", NOT_ZONED],
    ["2026-11-20T09:30", NOT_ZONED],
    ["2026-11-20 09:30:00Z", NOT_ZONED],
    ["2026-11-20T09:30:00+0200", NOT_ZONED],
    ["2026-02-30T10:00:00Z", "must be a real date and time."],
    ["2026-11-20T24:00:00Z", "must be a real date and time."],
    ["2026-11-20T09:30:00+24:00", "must be a real date and time."],
  ];

  it.each(reports)(
    "refuses a %s that names no instant, or no real one, with 400 naming the field",
    async (field, report) => {
      const before = await eventCount(business.id);
      for (const [value, rule] of refusedValues) {
        await expectError(await reportChange(business.id, report(value)), 400, `The field "${field}" ${rule}`);
      }
      expect(await eventCount(business.id)).toBe(before);
    },
  );

  it("answers the same through the RPC entrypoint", async () => {
    const booking = newBooking({ created_at: "2026-11-20T09:30:00" });
    expect(await exports.RuntimeApi.reportChange(business.id, { booking })).toEqual({
      ok: false,
      status: 400,
      code: "parameter_invalid",
      param: "booking.created_at",
      error: `The field "booking.created_at" ${NOT_ZONED}`,
    });
    const zoned = { ...booking, created_at: "2026-11-20T10:30:00+01:00" };
    expect(await exports.RuntimeApi.reportChange(business.id, { booking: zoned })).toMatchObject({ ok: true });
    expect((await appointment(apiKey, booking.id))?.created_at).toBe("2026-11-20T09:30:00.000Z");
  });
});

describe("POST /internal/v1/businesses/{id}/events: deliveries to webhook endpoints", async () => {
  const { business, apiKey } = await createBusiness();
  const everything = receiverBox("everything");
  const ordersOnly = receiverBox("orders-only");
  const subscribe = async (url: string, events?: string[]) => {
    const response = await call("/api/v1/webhooks", { key: apiKey, method: "POST", body: { url, events } });
    await expect(response).toHaveStatus(201);
    return (await json<{ id: number }>(response)).id;
  };
  const allEndpoint = await subscribe(everything.url("/hooks"));
  const ordersEndpoint = await subscribe(ordersOnly.url("/hooks"), ["order.created"]);

  const deliveriesOf = (eventId: string) =>
    db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId));

  /** Waits for the real queue consumer to deliver the event to the box, and answers the request it received. */
  async function received(box: ReturnType<typeof receiverBox>, eventId: string) {
    return vi.waitFor(
      async () => {
        const request = (await box.recorded()).find((candidate) => JSON.parse(candidate.body).id === eventId);
        if (!request) throw new Error(`event ${eventId} not delivered yet`);
        return request;
      },
      { timeout: 10_000, interval: 50 },
    );
  }

  it("writes a delivery for each subscribed endpoint with the event, and the queue delivers it", async () => {
    const booking = newBooking();
    const [created] = await expectEmitted(business.id, { booking }, ["booking.created"]);
    if (!created) throw new Error("no event");

    const rows = await deliveriesOf(created.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ businessId: business.id, eventId: created.id, endpointId: allEndpoint });
    expect(["pending", "delivered"]).toContain(rows[0]?.status);

    const request = await received(everything, created.id);
    const stored = await db.select().from(events).where(eq(events.id, created.id)).get();
    expect(request.method).toBe("POST");
    expect(request.path).toMatch(/\/hooks$/);
    expect(request.body).toBe(stored?.envelope);
    expect(request.headers["x-service-event"]).toBe("booking.created");
    expect(request.headers["x-service-delivery"]).toBe(String(rows[0]?.id));
    expect(request.headers["content-type"]).toMatch(/^application\/json/);
    expect(JSON.parse(request.body)).toMatchObject({ event: "booking.created", data: { booking } });

    await vi.waitFor(
      async () => {
        const [row] = await deliveriesOf(created.id);
        expect(row?.status).toBe("delivered");
      },
      { timeout: 10_000, interval: 50 },
    );
  });

  it("gives an endpoint subscribed only to order.created nothing for a booking event, and the order when one comes", async () => {
    const booking = newBooking();
    const [bookingEvent] = await expectEmitted(business.id, { booking }, ["booking.created"]);
    if (!bookingEvent) throw new Error("no event");
    expect((await deliveriesOf(bookingEvent.id)).map((row) => row.endpointId)).toEqual([allEndpoint]);

    const placed = newOrder();
    const [orderEvent] = await expectEmitted(business.id, { order: placed }, ["order.created"]);
    if (!orderEvent) throw new Error("no event");
    const rows = await deliveriesOf(orderEvent.id);
    expect(rows.map((row) => row.endpointId).sort((a, b) => a - b)).toEqual(
      [allEndpoint, ordersEndpoint].sort((a, b) => a - b),
    );

    // A status change of that order is not order.created: the orders-only endpoint gets no row for it.
    const [preparing] = await expectEmitted(business.id, { order: { ...placed, status: "preparing" } }, [
      "order.preparing",
    ]);
    if (!preparing) throw new Error("no event");
    expect((await deliveriesOf(preparing.id)).map((row) => row.endpointId)).toEqual([allEndpoint]);

    await Promise.all([
      received(everything, bookingEvent.id),
      received(everything, orderEvent.id),
      received(everything, preparing.id),
      received(ordersOnly, orderEvent.id),
    ]);
    const toOrdersOnly = await ordersOnly.recorded();
    expect(toOrdersOnly.map((request) => request.headers["x-service-event"])).toEqual(["order.created"]);
  });

  it("writes no delivery when a report changes nothing", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const count = async () =>
      (await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.businessId, business.id))).length;
    const before = await count();
    await expectNothingEmitted(business.id, { booking: { ...booking, notes: "quiet change" } });
    expect(await count()).toBe(before);
  });

  it("never writes a delivery to another business's endpoint", async () => {
    const neighbour = await createBusiness();
    const box = receiverBox("neighbour");
    const response = await call("/api/v1/webhooks", {
      key: neighbour.apiKey,
      method: "POST",
      body: { url: box.url("/hooks") },
    });
    const neighbourEndpoint = (await json<{ id: number }>(response)).id;
    const [event] = await expectEmitted(business.id, { booking: newBooking() }, ["booking.created"]);
    if (!event) throw new Error("no event");
    expect((await deliveriesOf(event.id)).map((row) => row.endpointId)).toEqual([allEndpoint]);
    expect(
      await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, neighbourEndpoint)),
    ).toEqual([]);
    await received(everything, event.id);
    expect(await box.recorded()).toEqual([]);
  });

  it("delivers payment.received, lead.created and review.created to a * endpoint", async () => {
    const payment = {
      event: "payment.received",
      data: { kind: "booking", amount: 10, currency: "EUR", reference: "pi_1", booking: newBooking() },
    };
    const review = {
      event: "review.created",
      data: {
        review: {
          id: 3,
          rating: 5,
          body: null,
          client_name: null,
          status: "new",
          submitted_at: "2026-11-22T11:00:00.000Z",
        },
      },
    };
    const lead = {
      event: "lead.created",
      data: {
        lead: {
          id: 9,
          name: "Lee",
          contact: "+31600000000",
          message: null,
          source: "sms",
          created_at: "2026-11-22T10:00:00.000Z",
        },
      },
    };
    // The payment is the first report of its booking: booking.created comes with it (docs/decisions.md).
    const emitted = [
      ...(await expectEmitted(business.id, payment, ["booking.created", "payment.received"])).slice(1),
      ...(await expectEmitted(business.id, lead, ["lead.created"])),
      ...(await expectEmitted(business.id, review, ["review.created"])),
    ];
    for (const event of emitted) {
      expect((await deliveriesOf(event.id)).map((row) => row.endpointId)).toEqual([allEndpoint]);
    }
    const requests = await Promise.all(emitted.map((event) => received(everything, event.id)));
    expect(requests.map((request) => request.headers["x-service-event"])).toEqual([
      "payment.received",
      "lead.created",
      "review.created",
    ]);
  });
});
