import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { events, webhookDeliveries } from "../src/db/schema";
import type { BookingObject } from "../src/schemas/booking";
import type { OrderObject } from "../src/schemas/order";
import { createBusiness, db } from "./helpers/fixtures";
import { call, expectError, json } from "./helpers/http";
import { bookingObject, reportChange } from "./helpers/platform";
import { receiverBox } from "./helpers/receiver";

const EVENT_ID = /^evt_[A-Za-z0-9_-]+$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NEITHER =
  'The request body must carry a "booking", an "order", or an "event" that is one of payment.received, lead.created, review.created.';

type Emitted = { events: Array<{ id: string; event: string }> };
type Business = Awaited<ReturnType<typeof createBusiness>>["business"];

let nextId = 50_000;

/** A full Booking object of the spec, every member filled in, with the next id. */
function newBooking(overrides: Partial<BookingObject> = {}): BookingObject {
  const id = nextId++;
  return bookingObject(id, {
    date: "2026-12-01",
    time: "10:00",
    duration_minutes: 45,
    service: { id: "svc_cut", name: "Haircut", price: "€35" },
    client: { name: "Ana Souza", email: "ana@example.com", phone: "+31612345678" },
    payment: { status: "unpaid", amount_paid: 0, agreed_amount: 30.5, currency: "EUR", reference: null },
    location: "Keizersgracht 1, Amsterdam",
    links: { reschedule: `https://book.example/r/${id}`, cancel: `https://book.example/c/${id}` },
    conversation_id: "conv_123",
    created_at: "2026-11-20T09:30:00.000Z",
    ...overrides,
  });
}

/** A full Order object of the spec. */
function newOrder(overrides: Partial<OrderObject> = {}): OrderObject {
  return {
    id: nextId++,
    status: "pending",
    items: [
      { service_id: "svc_bread", name: "Sourdough", qty: 2, unit_price: 4.5 },
      { service_id: "svc_cake", name: "Carrot cake", qty: 1, unit_price: 12.25 },
    ],
    total: 21.25,
    pay_on_delivery: true,
    fulfillment_type: "delivery",
    delivery_address: "Prinsengracht 2, Amsterdam",
    delivery_notes: "Ring twice",
    tracking_number: null,
    carrier: null,
    ready_at: null,
    estimated_ready_at: "2026-11-21T16:00:00.000Z",
    tracking_url: null,
    client: { name: "Ben Okafor", email: null, phone: "+31687654321" },
    payment: { status: "pending", amount_paid: 0 },
    notes: null,
    conversation_id: null,
    created_at: "2026-11-21T12:00:00.000Z",
    ...overrides,
  };
}

/** The events route with other headers than the runtime token's: for the refusals of a missing or wrong token. */
const postEventsWith = (businessId: string, body: unknown, headers: Record<string, string>) =>
  call(`/internal/v1/businesses/${businessId}/events`, { method: "POST", body, headers });

/** Reports a change that must emit exactly `names`, and answers the emitted events. */
async function expectEmitted(businessId: string, body: unknown, names: string[]) {
  const response = await reportChange(businessId, body);
  const emitted = await json<Emitted>(response);
  expect(emitted).toEqual({ events: names.map((event) => ({ id: expect.stringMatching(EVENT_ID), event })) });
  expect(response.status).toBe(names.length > 0 ? 201 : 200);
  return emitted.events;
}

async function expectNothingEmitted(businessId: string, body: unknown) {
  const response = await reportChange(businessId, body);
  expect(response.status).toBe(200);
  expect(await json(response)).toEqual({ events: [] });
}

/** The stored envelope of an event: exactly the spec's five fields. */
async function storedEnvelope(business: Business, emitted: { id: string; event: string } | undefined) {
  if (!emitted) throw new Error("no event emitted");
  const row = await db.select().from(events).where(eq(events.id, emitted.id)).get();
  if (!row) throw new Error(`event ${emitted.id} not stored`);
  expect(row.businessId).toBe(business.id);
  expect(row.type).toBe(emitted.event);
  const envelope = JSON.parse(row.envelope) as Record<string, unknown>;
  expect(Object.keys(envelope).sort()).toEqual(["business", "created_at", "data", "event", "id"]);
  expect(envelope).toMatchObject({
    id: emitted.id,
    event: emitted.event,
    created_at: row.createdAt,
    business: { id: business.id, handle: business.handle, name: business.name },
  });
  expect(envelope.business).toEqual({ id: business.id, handle: business.handle, name: business.name });
  expect(envelope.created_at).toMatch(TIMESTAMP);
  return envelope.data;
}

const eventCount = async (businessId: string) =>
  (await db.select({ id: events.id }).from(events).where(eq(events.businessId, businessId))).length;

async function appointment(apiKey: string, id: number) {
  const page = await json<{ data: BookingObject[] }>(await call("/api/v1/appointments?limit=100", { key: apiKey }));
  return page.data.find((booking) => booking.id === id);
}

async function order(apiKey: string, id: number) {
  const page = await json<{ data: OrderObject[] }>(await call("/api/v1/orders?limit=100", { key: apiKey }));
  return page.data.find((candidate) => candidate.id === id);
}

describe("POST /internal/v1/businesses/{id}/events: bookings", async () => {
  const { business, apiKey } = await createBusiness();

  it("stores a new booking, answers 201 with booking.created, and GET /appointments shows it exactly as sent", async () => {
    const booking = newBooking();
    const [created] = await expectEmitted(business.id, { booking }, ["booking.created"]);
    expect(await appointment(apiKey, booking.id)).toEqual(booking);
    expect(await storedEnvelope(business, created)).toEqual({ booking });
  });

  it("keeps a booking without links, client details or payment reference as sent", async () => {
    const booking = newBooking({
      links: null,
      client: { name: null, email: null, phone: null },
      payment: { status: "paid", amount_paid: 35, agreed_amount: null, currency: "EUR", reference: "pi_9" },
      location: null,
      conversation_id: null,
      notes: "Allergic to latex",
    });
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    expect(await appointment(apiKey, booking.id)).toEqual(booking);
  });

  it("answers 200 { events: [] } when the same booking is sent again, also with its keys in another order", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const before = await eventCount(business.id);
    await expectNothingEmitted(business.id, { booking });
    const reordered: Record<string, unknown> = Object.fromEntries(Object.entries(booking).reverse());
    reordered.payment = Object.fromEntries(Object.entries(booking.payment).reverse());
    await expectNothingEmitted(business.id, { booking: reordered });
    expect(await eventCount(business.id)).toBe(before);
  });

  it("ignores keys the Booking object does not have", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking: { ...booking, internal_flag: true } }, ["booking.created"]);
    expect(await appointment(apiKey, booking.id)).toEqual(booking);
    await expectNothingEmitted(business.id, { booking });
  });

  it("emits booking.rescheduled with the previous date and time when the date or time changes", async () => {
    const booking = newBooking({ date: "2026-12-03", time: "09:15" });
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const moved = {
      ...booking,
      date: "2026-12-05",
      reschedule_count: 1,
      original_date: "2026-12-03",
      original_time: "09:15",
    };
    const [rescheduled] = await expectEmitted(business.id, { booking: moved }, ["booking.rescheduled"]);
    expect(await storedEnvelope(business, rescheduled)).toEqual({
      booking: moved,
      previous: { date: "2026-12-03", time: "09:15" },
    });
    expect(await appointment(apiKey, booking.id)).toEqual(moved);

    const later = { ...moved, time: "16:45", reschedule_count: 2 };
    const [again] = await expectEmitted(business.id, { booking: later }, ["booking.rescheduled"]);
    expect(await storedEnvelope(business, again)).toEqual({
      booking: later,
      previous: { date: "2026-12-05", time: "09:15" },
    });
  });

  it("emits booking.cancelled with cancelled_by and reason", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const cancelled = { ...booking, status: "cancelled" as const };
    const [event] = await expectEmitted(
      business.id,
      { booking: cancelled, cancelled_by: "client", reason: "Feeling unwell" },
      ["booking.cancelled"],
    );
    expect(await storedEnvelope(business, event)).toEqual({
      booking: cancelled,
      cancelled_by: "client",
      reason: "Feeling unwell",
    });
    expect((await appointment(apiKey, booking.id))?.status).toBe("cancelled");
  });

  it("gives reason null when the merchant cancels without one", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const cancelled = { ...booking, status: "cancelled" as const };
    const [event] = await expectEmitted(business.id, { booking: cancelled, cancelled_by: "merchant" }, [
      "booking.cancelled",
    ]);
    expect(await storedEnvelope(business, event)).toEqual({
      booking: cancelled,
      cancelled_by: "merchant",
      reason: null,
    });
  });

  it("refuses a cancellation without cancelled_by with 400, storing neither the snapshot nor an event", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const before = await eventCount(business.id);
    await expectError(
      await reportChange(business.id, { booking: { ...booking, status: "cancelled" }, reason: "No show of the staff" }),
      400,
      'The field "cancelled_by" is required when a booking is cancelled.',
    );
    expect(await appointment(apiKey, booking.id)).toEqual(booking);
    expect(await eventCount(business.id)).toBe(before);
  });

  it.each([
    [{ cancelled_by: "robot" }, 'The field "cancelled_by" must be one of "client", "merchant".'],
    [{ cancelled_by: "client", reason: 5 }, 'The field "reason" must be a string.'],
    [{ cancelled_by: "client", reason: "r".repeat(1001) }, 'The field "reason" must be at most 1000 characters long.'],
  ])("refuses a cancellation with %j with 400", async (extra, error) => {
    const booking = newBooking({ status: "confirmed" });
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    await expectError(
      await reportChange(business.id, { booking: { ...booking, status: "cancelled" }, ...extra }),
      400,
      error,
    );
    expect((await appointment(apiKey, booking.id))?.status).toBe("confirmed");
  });

  it('emits booking.cancelled with action "no_show" for a no-show', async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const noShow = { ...booking, status: "no_show" as const };
    const [event] = await expectEmitted(business.id, { booking: noShow, reason: "Did not come" }, [
      "booking.cancelled",
    ]);
    expect(await storedEnvelope(business, event)).toEqual({
      booking: noShow,
      action: "no_show",
      reason: "Did not come",
    });

    const other = newBooking();
    await expectEmitted(business.id, { booking: other }, ["booking.created"]);
    const [withoutReason] = await expectEmitted(business.id, { booking: { ...other, status: "no_show" } }, [
      "booking.cancelled",
    ]);
    expect(await storedEnvelope(business, withoutReason)).toEqual({
      booking: { ...other, status: "no_show" },
      action: "no_show",
      reason: null,
    });
  });

  it("emits booking.completed, with completed_by only when the customer confirmed it", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const completed = { ...booking, status: "completed" as const };
    const [event] = await expectEmitted(business.id, { booking: completed }, ["booking.completed"]);
    expect(await storedEnvelope(business, event)).toEqual({ booking: completed });

    const byClient = newBooking();
    await expectEmitted(business.id, { booking: byClient }, ["booking.created"]);
    const done = { ...byClient, status: "completed" as const };
    const [confirmed] = await expectEmitted(business.id, { booking: done, completed_by: "client" }, [
      "booking.completed",
    ]);
    expect(await storedEnvelope(business, confirmed)).toEqual({ booking: done, completed_by: "client" });

    await expectError(
      await reportChange(business.id, { booking: { ...newBooking(), status: "completed" }, completed_by: "merchant" }),
      400,
      /^The field "completed_by" /,
    );
  });

  it("emits booking.rescheduled then booking.cancelled when one report moves and cancels", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const both = { ...booking, date: "2026-12-24", status: "cancelled" as const };
    const [rescheduled, cancelled] = await expectEmitted(business.id, { booking: both, cancelled_by: "client" }, [
      "booking.rescheduled",
      "booking.cancelled",
    ]);
    expect(await storedEnvelope(business, rescheduled)).toEqual({
      booking: both,
      previous: { date: booking.date, time: booking.time },
    });
    expect(await storedEnvelope(business, cancelled)).toEqual({ booking: both, cancelled_by: "client", reason: null });
  });

  it("emits nothing for a notes-only change, but the snapshot follows it (visible in GET)", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const noted = { ...booking, notes: "Prefers the window seat" };
    await expectNothingEmitted(business.id, { booking: noted });
    expect(await appointment(apiKey, booking.id)).toEqual(noted);
    const cleared = { ...noted, notes: null };
    await expectNothingEmitted(business.id, { booking: cleared });
    expect(await appointment(apiKey, booking.id)).toEqual(cleared);
  });

  it("emits nothing for other changes that no event names (payment, client, pending → confirmed)", async () => {
    const booking = newBooking({ status: "pending" });
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const confirmed = { ...booking, status: "confirmed" as const };
    await expectNothingEmitted(business.id, { booking: confirmed });
    const paid = { ...confirmed, payment: { ...confirmed.payment, status: "paid", amount_paid: 30.5 } };
    await expectNothingEmitted(business.id, { booking: paid });
    const renamed = { ...paid, client: { ...paid.client, name: "Ana S." } };
    await expectNothingEmitted(business.id, { booking: renamed });
    expect(await appointment(apiKey, booking.id)).toEqual(renamed);
  });

  it("emits only booking.created for a booking first reported already cancelled", async () => {
    const booking = newBooking({ status: "cancelled" });
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    expect(await appointment(apiKey, booking.id)).toEqual(booking);
  });
});

describe("POST /internal/v1/businesses/{id}/events: orders", async () => {
  const { business, apiKey } = await createBusiness();

  it("stores a new order, emits order.created, and GET /orders shows it exactly as sent", async () => {
    const placed = newOrder();
    const [created] = await expectEmitted(business.id, { order: placed }, ["order.created"]);
    expect(await order(apiKey, placed.id)).toEqual(placed);
    expect(await storedEnvelope(business, created)).toEqual({ order: placed });
    await expectNothingEmitted(business.id, { order: placed });
  });

  it("walks an order through its statuses, one event per status that names one", async () => {
    let current = newOrder({ status: "pending" });
    await expectEmitted(business.id, { order: current }, ["order.created"]);

    current = { ...current, status: "confirmed" };
    await expectNothingEmitted(business.id, { order: current });
    expect((await order(apiKey, current.id))?.status).toBe("confirmed");

    const steps: Array<[OrderObject["status"], string, Partial<OrderObject>]> = [
      ["preparing", "order.preparing", {}],
      ["ready_for_pickup", "order.ready", { ready_at: "2026-11-21T15:55:00.000Z" }],
      [
        "out_for_delivery",
        "order.dispatched",
        { tracking_number: "3SABC123", carrier: "PostNL", tracking_url: "https://track.example/3SABC123" },
      ],
      ["fulfilled", "order.fulfilled", { payment: { status: "paid", amount_paid: 21.25 } }],
    ];
    for (const [status, name, changes] of steps) {
      current = { ...current, ...changes, status };
      const [event] = await expectEmitted(business.id, { order: current }, [name]);
      expect(await storedEnvelope(business, event)).toEqual({ order: current });
      expect(await order(apiKey, current.id)).toEqual(current);
      await expectNothingEmitted(business.id, { order: current });
    }
  });

  it("emits order.cancelled with the reason, or reason null", async () => {
    const placed = newOrder({ status: "confirmed" });
    await expectEmitted(business.id, { order: placed }, ["order.created"]);
    const cancelled = { ...placed, status: "cancelled" as const };
    const [event] = await expectEmitted(business.id, { order: cancelled, reason: "Out of stock" }, ["order.cancelled"]);
    expect(await storedEnvelope(business, event)).toEqual({ order: cancelled, reason: "Out of stock" });

    const other = newOrder();
    await expectEmitted(business.id, { order: other }, ["order.created"]);
    const [withoutReason] = await expectEmitted(business.id, { order: { ...other, status: "cancelled" } }, [
      "order.cancelled",
    ]);
    expect(await storedEnvelope(business, withoutReason)).toEqual({
      order: { ...other, status: "cancelled" },
      reason: null,
    });
  });

  it("emits nothing for a change of notes or items, but stores it", async () => {
    const placed = newOrder();
    await expectEmitted(business.id, { order: placed }, ["order.created"]);
    const changed = {
      ...placed,
      notes: "Leave at the door",
      items: [{ service_id: "svc_bread", name: "Sourdough", qty: 3, unit_price: 4.5 }],
      total: 13.5,
    };
    await expectNothingEmitted(business.id, { order: changed });
    expect(await order(apiKey, placed.id)).toEqual(changed);
  });

  it.each([
    [{ status: "shipped" }, /^The field "order\.status" must be one of "pending", "confirmed", /],
    [{ fulfillment_type: "drone" }, 'The field "order.fulfillment_type" must be one of "pickup", "delivery".'],
    [{ items: "bread" }, 'The field "order.items" must be an array.'],
    [{ total: "21.25" }, 'The field "order.total" must be a number.'],
    [{ pay_on_delivery: "yes" }, 'The field "order.pay_on_delivery" must be a boolean.'],
  ])("refuses an order with %j with 400 naming the field", async (changes, error) => {
    await expectError(await reportChange(business.id, { order: { ...newOrder(), ...changes } }), 400, error);
  });

  it("refuses an order missing a field, naming it", async () => {
    const { items: _items, ...withoutItems } = newOrder();
    await expectError(
      await reportChange(business.id, { order: withoutItems }),
      400,
      'The field "order.items" is required.',
    );
    const broken = newOrder();
    const item = { ...broken.items[0], qty: undefined };
    await expectError(
      await reportChange(business.id, { order: { ...broken, items: [item] } }),
      400,
      'The field "order.items[0].qty" is required.',
    );
  });
});

describe("POST /internal/v1/businesses/{id}/events: payments, leads and reviews", async () => {
  const { business, apiKey } = await createBusiness();

  it("emits payment.received for a booking, with its data as sent, and keeps the booking snapshot current", async () => {
    const booking = newBooking();
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const paid = { ...booking, payment: { ...booking.payment, status: "paid", amount_paid: 30.5, reference: "pi_42" } };
    const data = { kind: "booking", amount: 30.5, currency: "EUR", reference: "pi_42", booking: paid };
    const [event] = await expectEmitted(business.id, { event: "payment.received", data }, ["payment.received"]);
    expect(await storedEnvelope(business, event)).toEqual(data);
    expect(await appointment(apiKey, booking.id)).toEqual(paid);
    await expectNothingEmitted(business.id, { booking: paid });
  });

  it("emits order.created then payment.received for an order first reported by its payment", async () => {
    const placed = newOrder();
    const data = { kind: "order", amount: 21.25, currency: "EUR", reference: null, order: placed };
    const [, event] = await expectEmitted(business.id, { event: "payment.received", data }, [
      "order.created",
      "payment.received",
    ]);
    expect(await storedEnvelope(business, event)).toEqual(data);
    expect(await order(apiKey, placed.id)).toEqual(placed);
  });

  it.each([
    ["kind booking carrying an order", { kind: "booking", order: "ORDER" }],
    ["kind order carrying a booking", { kind: "order", booking: "BOOKING" }],
    ["kind booking carrying nothing", { kind: "booking" }],
    ["both a booking and an order", { kind: "booking", booking: "BOOKING", order: "ORDER" }],
  ])("refuses a payment with %s with 400", async (_case, shape) => {
    const objects: Record<string, unknown> = { BOOKING: newBooking(), ORDER: newOrder() };
    const data = Object.fromEntries(
      Object.entries({ amount: 10, currency: "EUR", reference: null, ...shape }).map(([key, value]) => [
        key,
        typeof value === "string" && value in objects ? objects[value] : value,
      ]),
    );
    await expectError(
      await reportChange(business.id, { event: "payment.received", data }),
      400,
      'The field "data" must carry the booking or the order that its kind names, and only that one.',
    );
  });

  it.each([
    [{ kind: "refund" }, /^The field "data\.kind" must be one of "booking", "order"\.$/],
    [{ currency: "eur" }, 'The field "data.currency" must be an ISO 4217 code.'],
    [{ amount: "10" }, 'The field "data.amount" must be a number.'],
  ])("refuses a payment with %j with 400 naming the field", async (changes, error) => {
    const data = { kind: "booking", amount: 10, currency: "EUR", reference: null, booking: newBooking(), ...changes };
    await expectError(await reportChange(business.id, { event: "payment.received", data }), 400, error);
  });

  it("emits lead.created with { lead }", async () => {
    const data = {
      lead: {
        id: "lead_17",
        name: "Chris Doe",
        contact: "chris@example.com",
        message: "Do you do colouring?",
        source: "website_widget",
        created_at: "2026-11-22T10:00:00.000Z",
      },
    };
    const [event] = await expectEmitted(business.id, { event: "lead.created", data }, ["lead.created"]);
    expect(await storedEnvelope(business, event)).toEqual(data);
    await expectError(
      await reportChange(business.id, {
        event: "lead.created",
        data: { lead: { ...data.lead, created_at: undefined } },
      }),
      400,
      'The field "data.lead.created_at" is required.',
    );
  });

  it("emits review.created with { review }, and refuses a rating outside 1 to 5", async () => {
    const review = {
      id: 88,
      rating: 5,
      body: "Lovely cut",
      client_name: "Ana Souza",
      status: "published",
      submitted_at: "2026-11-22T11:00:00.000Z",
    };
    const [event] = await expectEmitted(business.id, { event: "review.created", data: { review } }, ["review.created"]);
    expect(await storedEnvelope(business, event)).toEqual({ review });

    const before = await eventCount(business.id);
    await expectError(
      await reportChange(business.id, { event: "review.created", data: { review: { ...review, rating: 6 } } }),
      400,
      'The field "data.review.rating" must be at most 5.',
    );
    await expectError(
      await reportChange(business.id, { event: "review.created", data: { review: { ...review, rating: 0 } } }),
      400,
      'The field "data.review.rating" must be at least 1.',
    );
    await expectError(
      await reportChange(business.id, { event: "review.created", data: { review: { ...review, rating: 4.5 } } }),
      400,
      /^The field "data\.review\.rating" must be an integer/,
    );
    expect(await eventCount(business.id)).toBe(before);
  });

  it("emits a new event each time, even for the same lead (these are not snapshots)", async () => {
    const data = {
      lead: { id: 5, name: null, contact: null, message: null, source: null, created_at: "2026-11-22T10:00:00.000Z" },
    };
    const [first] = await expectEmitted(business.id, { event: "lead.created", data }, ["lead.created"]);
    const [second] = await expectEmitted(business.id, { event: "lead.created", data }, ["lead.created"]);
    expect(first?.id).not.toBe(second?.id);
  });
});

describe("POST /internal/v1/businesses/{id}/events: concurrent reports", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();

  it("emits booking.created exactly once when the same new booking is reported five times at once", async () => {
    const booking = newBooking();
    const responses = await Promise.all(Array.from({ length: 5 }, () => reportChange(business.id, { booking })));
    const bodies = await Promise.all(responses.map((response) => json<Emitted>(response)));
    expect(responses.map((response) => response.status).sort()).toEqual([200, 200, 200, 200, 201]);
    expect(bodies.flatMap((body) => body.events.map((event) => event.event))).toEqual(["booking.created"]);
    expect(await appointment(apiKey, booking.id)).toEqual(booking);
  });

  it("chains concurrent reschedules: each event's previous is the date the one before it stored", async () => {
    const booking = newBooking({ date: "2027-01-10", time: "09:00" });
    await expectEmitted(business.id, { booking }, ["booking.created"]);
    const moves = ["2027-01-11", "2027-01-12", "2027-01-13"].map((date) => ({ ...booking, date }));
    const bodies = await Promise.all(
      moves.map((moved) => reportChange(business.id, { booking: moved }).then((r) => json<Emitted>(r))),
    );
    const ids = bodies.flatMap((body) => body.events.map((event) => event.id));
    expect(ids).toHaveLength(3);
    const envelopes = await Promise.all(
      ids.map((id) => storedEnvelope(business, { id, event: "booking.rescheduled" })),
    );
    const steps = envelopes.map((data) => ({
      from: (data as { previous: { date: string } }).previous.date,
      to: (data as { booking: { date: string } }).booking.date,
    }));
    // Whatever order they landed in, the three moves form one chain starting from the created date.
    const chain = ["2027-01-10"];
    while (chain.length <= steps.length) {
      const next = steps.find((step) => step.from === chain.at(-1));
      if (!next) break;
      chain.push(next.to);
    }
    expect(chain).toHaveLength(4);
    expect((await appointment(apiKey, booking.id))?.date).toBe(chain.at(-1));
  });

  it("answers 409 for a payment carrying another business's booking, and changes nothing", async () => {
    const theirs = newBooking();
    await expectEmitted(other.business.id, { booking: theirs }, ["booking.created"]);
    const before = await eventCount(business.id);
    const data = {
      kind: "booking",
      amount: 10,
      currency: "EUR",
      reference: "pi_x",
      booking: { ...theirs, notes: "x" },
    };
    await expectError(
      await reportChange(business.id, { event: "payment.received", data }),
      409,
      "That booking id belongs to another business.",
    );
    expect(await eventCount(business.id)).toBe(before);
    expect(await appointment(other.apiKey, theirs.id)).toEqual(theirs);
  });

  it("emits booking.created then payment.received for a booking first reported by its payment", async () => {
    const booking = newBooking();
    const data = { kind: "booking", amount: 30.5, currency: "EUR", reference: "pi_1", booking };
    await expectEmitted(business.id, { event: "payment.received", data }, ["booking.created", "payment.received"]);
    await expectNothingEmitted(business.id, { booking });
  });
});

describe("POST /internal/v1/businesses/{id}/events: refusals", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();

  it.each([
    ["date", 'The field "booking.date" is required.'],
    ["time", 'The field "booking.time" is required.'],
    ["service", 'The field "booking.service" is required.'],
    ["created_at", 'The field "booking.created_at" is required.'],
    ["id", 'The field "booking.id" is required.'],
  ] as const)("refuses a booking without %s with 400 naming it", async (field, error) => {
    const booking: Partial<BookingObject> = newBooking();
    delete booking[field];
    await expectError(await reportChange(business.id, { booking }), 400, error);
  });

  it.each([
    [{ date: "2026-02-30" }, 'The field "booking.date" must be a real calendar date.'],
    [{ date: "01-12-2026" }, 'The field "booking.date" must be a date written YYYY-MM-DD.'],
    [{ time: "25:00" }, 'The field "booking.time" must be a time written HH:MM.'],
    [{ status: "lost" }, /^The field "booking\.status" must be one of "pending", "confirmed", /],
    [{ id: "12" }, 'The field "booking.id" must be a number.'],
    [{ id: 1.5 }, /^The field "booking\.id" must be an integer/],
    [{ client: { name: "A", email: null } }, 'The field "booking.client.phone" is required.'],
    [{ links: { reschedule: "https://book.example/r" } }, 'The field "booking.links.cancel" is required.'],
  ])("refuses a booking with %j with 400 naming the field", async (changes, error) => {
    await expectError(await reportChange(business.id, { booking: { ...newBooking(), ...changes } }), 400, error);
  });

  it.each([
    ["a booking that is not an object", { booking: "b_1" }, 'The field "booking" must be an object.'],
    ["an order that is null", { order: null }, 'The field "order" must be an object.'],
  ])("refuses %s with 400", async (_case, body, error) => {
    await expectError(await reportChange(business.id, body), 400, error);
  });

  it.each([
    ["an empty object", {}],
    ["an array", []],
    ["a string", "booking"],
    ["null", null],
    ["an unknown event name", { event: "booking.created", data: { booking: newBooking() } }],
    ["an event that is not reported here (ping)", { event: "ping", data: { message: "hi" } }],
    ["an event that is not a string", { event: 7, data: {} }],
  ])("refuses a body that is neither a booking, an order nor an event (%s) with 400", async (_case, body) => {
    await expectError(await reportChange(business.id, JSON.stringify(body)), 400, NEITHER);
  });

  it("refuses malformed JSON with 400", async () => {
    await expectError(await reportChange(business.id, '{"booking": {'), 400, "The request body is not valid JSON.");
  });

  it.each([
    ["a booking", () => ({ booking: newBooking() })],
    ["an order", () => ({ order: newOrder() })],
    [
      "a review",
      () => ({
        event: "review.created",
        data: {
          review: {
            id: 1,
            rating: 4,
            body: null,
            client_name: null,
            status: "new",
            submitted_at: "2026-11-22T11:00:00.000Z",
          },
        },
      }),
    ],
  ])("answers 404 for %s of an unknown business", async (_case, body) => {
    await expectError(await reportChange(crypto.randomUUID(), body()), 404, "No business has that id.");
  });

  it.each(["not-a-uuid", "12345", business.id.toUpperCase().replace(/-/g, "")])(
    "answers 400 for the business id %j",
    async (id) => {
      await expectError(
        await reportChange(id, { booking: newBooking() }),
        400,
        'The path parameter "id" must be a business id (a UUID).',
      );
    },
  );

  it("answers 409 for a booking id of another business, whose snapshot stays as it was", async () => {
    const theirs = newBooking();
    await expectEmitted(other.business.id, { booking: theirs }, ["booking.created"]);
    const before = await eventCount(business.id);
    await expectError(
      await reportChange(business.id, {
        booking: { ...theirs, notes: "hijacked", status: "cancelled" },
        cancelled_by: "merchant",
      }),
      409,
      "That booking id belongs to another business.",
    );
    await expectError(
      await reportChange(business.id, { booking: theirs }),
      409,
      "That booking id belongs to another business.",
    );
    expect(await appointment(other.apiKey, theirs.id)).toEqual(theirs);
    expect(await appointment(apiKey, theirs.id)).toBeUndefined();
    expect(await eventCount(business.id)).toBe(before);
  });

  it("answers 409 for an order id of another business, whose snapshot stays as it was", async () => {
    const theirs = newOrder();
    await expectEmitted(other.business.id, { order: theirs }, ["order.created"]);
    await expectError(
      await reportChange(business.id, { order: { ...theirs, status: "cancelled" } }),
      409,
      "That order id belongs to another business.",
    );
    expect(await order(other.apiKey, theirs.id)).toEqual(theirs);
    expect(await order(apiKey, theirs.id)).toBeUndefined();
  });

  it.each([
    ["no token", {}],
    ["a wrong token", { Authorization: "Bearer wrong-token" }],
    ["the token under another scheme", { Authorization: `Basic ${env.RUNTIME_TOKEN}` }],
    ["the token with a suffix", { Authorization: `Bearer ${env.RUNTIME_TOKEN}x` }],
  ])("refuses %s with 401 and stores nothing", async (_case, headers) => {
    const booking = newBooking();
    await expectError(
      await postEventsWith(business.id, { booking }, headers),
      401,
      "The runtime token is missing or not valid.",
    );
    expect(await appointment(apiKey, booking.id)).toBeUndefined();
  });

  it("refuses a partner API key with 401", async () => {
    const booking = newBooking();
    await expectError(
      await postEventsWith(business.id, { booking }, { Authorization: `Bearer ${apiKey}` }),
      401,
      "The runtime token is missing or not valid.",
    );
    expect(await appointment(apiKey, booking.id)).toBeUndefined();
  });

  it("checks the token before anything else: a bad body or an unknown business without it is 401", async () => {
    expect((await postEventsWith(crypto.randomUUID(), { booking: newBooking() }, {})).status).toBe(401);
    expect((await postEventsWith("not-a-uuid", "{", {})).status).toBe(401);
  });
});

describe("POST /internal/v1/businesses/{id}/events: timestamps (DESIGN.md, Timestamps the core platform reports)", async () => {
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
      error: `The field "booking.created_at" ${NOT_ZONED}`,
    });
    const zoned = { ...booking, created_at: "2026-11-20T10:30:00+01:00" };
    expect(await exports.RuntimeApi.reportChange(business.id, { booking: zoned })).toMatchObject({ ok: true });
    expect((await appointment(apiKey, booking.id))?.created_at).toBe("2026-11-20T09:30:00.000Z");
  });
});

describe("RuntimeApi.reportChange (RPC): the same as its HTTP mirror, with refusals as values", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();
  const runtime = exports.RuntimeApi;

  it("stores a booking and answers the events emitted; the HTTP mirror then sees nothing new", async () => {
    const booking = newBooking();
    const result = await runtime.reportChange(business.id, { booking });
    expect(result).toEqual({ ok: true, value: [{ id: expect.stringMatching(EVENT_ID), event: "booking.created" }] });
    expect(await appointment(apiKey, booking.id)).toEqual(booking);
    expect(await runtime.reportChange(business.id, { booking })).toEqual({ ok: true, value: [] });
    await expectNothingEmitted(business.id, { booking });

    const moved = { ...booking, time: "11:30" };
    await expectEmitted(business.id, { booking: moved }, ["booking.rescheduled"]);
    expect(await runtime.reportChange(business.id, { booking: { ...moved, status: "completed" } })).toEqual({
      ok: true,
      value: [{ id: expect.stringMatching(EVENT_ID), event: "booking.completed" }],
    });
  });

  it("answers orders and other events the same way", async () => {
    expect(await runtime.reportChange(business.id, { order: newOrder() })).toMatchObject({
      ok: true,
      value: [{ event: "order.created" }],
    });
    const lead = {
      id: 1,
      name: "X",
      contact: null,
      message: null,
      source: null,
      created_at: "2026-11-22T10:00:00.000Z",
    };
    expect(await runtime.reportChange(business.id, { event: "lead.created", data: { lead } })).toMatchObject({
      ok: true,
      value: [{ event: "lead.created" }],
    });
  });

  it("answers ok:false with status 400 and the sentence for bad input", async () => {
    const { date: _date, ...withoutDate } = newBooking();
    expect(await runtime.reportChange(business.id, { booking: withoutDate })).toEqual({
      ok: false,
      status: 400,
      error: 'The field "booking.date" is required.',
    });
    expect(await runtime.reportChange(business.id, {})).toEqual({ ok: false, status: 400, error: NEITHER });
    expect(await runtime.reportChange(business.id, null)).toEqual({ ok: false, status: 400, error: NEITHER });
    const booking = newBooking();
    await runtime.reportChange(business.id, { booking });
    expect(await runtime.reportChange(business.id, { booking: { ...booking, status: "cancelled" } })).toEqual({
      ok: false,
      status: 400,
      error: 'The field "cancelled_by" is required when a booking is cancelled.',
    });
  });

  it("answers ok:false with status 404 for an unknown business and 400 for an id that is not one", async () => {
    expect(await runtime.reportChange(crypto.randomUUID(), { booking: newBooking() })).toEqual({
      ok: false,
      status: 404,
      error: "No business has that id.",
    });
    expect(await runtime.reportChange("not-a-uuid", { booking: newBooking() })).toEqual({
      ok: false,
      status: 400,
      error: 'The path parameter "id" must be a business id (a UUID).',
    });
  });

  it("answers ok:false with status 409 for a booking of another business", async () => {
    const theirs = newBooking();
    await runtime.reportChange(other.business.id, { booking: theirs });
    expect(await runtime.reportChange(business.id, { booking: { ...theirs, notes: "x" } })).toEqual({
      ok: false,
      status: 409,
      error: "That booking id belongs to another business.",
    });
    expect(await appointment(other.apiKey, theirs.id)).toEqual(theirs);
  });
});

describe("POST /internal/v1/businesses/{id}/events: deliveries to webhook endpoints", async () => {
  const { business, apiKey } = await createBusiness();
  const everything = receiverBox("everything");
  const ordersOnly = receiverBox("orders-only");
  const subscribe = async (url: string, events?: string[]) => {
    const response = await call("/api/v1/webhooks", { key: apiKey, method: "POST", body: { url, events } });
    expect(response.status).toBe(201);
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
