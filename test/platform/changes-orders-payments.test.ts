import { describe, expect, it } from "vitest";
import type { OrderObject } from "../../src/schemas/order";
import { createBusiness } from "../helpers/fixtures";
import { expectError, json } from "../helpers/http";
import { reportChange } from "../helpers/platform";
import {
  appointment,
  type Emitted,
  eventCount,
  expectEmitted,
  expectNothingEmitted,
  newBooking,
  newOrder,
  order,
  storedEnvelope,
} from "../helpers/platform-changes";

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

  it("takes a payment for a booking of the same id as another business's as its own booking", async () => {
    const theirs = newBooking();
    await expectEmitted(other.business.id, { booking: theirs }, ["booking.created"]);
    const data = {
      kind: "booking",
      amount: 10,
      currency: "EUR",
      reference: "pi_x",
      booking: { ...theirs, notes: "x" },
    };
    await expectEmitted(business.id, { event: "payment.received", data }, ["booking.created", "payment.received"]);
    expect(await appointment(other.apiKey, theirs.id)).toEqual(theirs);
    expect(await appointment(apiKey, theirs.id)).toMatchObject({ notes: "x" });
  });

  it("emits booking.created then payment.received for a booking first reported by its payment", async () => {
    const booking = newBooking();
    const data = { kind: "booking", amount: 30.5, currency: "EUR", reference: "pi_1", booking };
    await expectEmitted(business.id, { event: "payment.received", data }, ["booking.created", "payment.received"]);
    await expectNothingEmitted(business.id, { booking });
  });
});
