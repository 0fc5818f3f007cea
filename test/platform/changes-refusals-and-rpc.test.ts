import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { BookingObject } from "../../src/schemas/booking";
import { createBusiness } from "../helpers/fixtures";
import { expectError } from "../helpers/http";
import { reportChange } from "../helpers/platform";
import {
  appointment,
  EVENT_ID,
  expectEmitted,
  expectNothingEmitted,
  NEITHER,
  newBooking,
  newOrder,
  order,
  postEventsWith,
} from "../helpers/platform-changes";

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

  // docs/scaling.md, Ids unique across shards: the core platform's ids are unique per business, not per database.
  it("keeps a booking of the same id as another business's apart from it: each reads its own", async () => {
    const theirs = newBooking();
    await expectEmitted(other.business.id, { booking: theirs }, ["booking.created"]);
    const ours = { ...theirs, notes: "ours", status: "pending" as const };
    await expectEmitted(business.id, { booking: ours }, ["booking.created"]);
    await expectEmitted(business.id, { booking: { ...ours, status: "cancelled" }, cancelled_by: "merchant" }, [
      "booking.cancelled",
    ]);
    expect(await appointment(other.apiKey, theirs.id)).toEqual(theirs);
    expect(await appointment(apiKey, theirs.id)).toMatchObject({ notes: "ours", status: "cancelled" });
  });

  it("keeps an order of the same id as another business's apart from it", async () => {
    const theirs = newOrder();
    await expectEmitted(other.business.id, { order: theirs }, ["order.created"]);
    await expectEmitted(business.id, { order: { ...theirs, status: "cancelled" } }, ["order.created"]);
    expect(await order(other.apiKey, theirs.id)).toEqual(theirs);
    expect(await order(apiKey, theirs.id)).toMatchObject({ status: "cancelled" });
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
    await expect(await postEventsWith(crypto.randomUUID(), { booking: newBooking() }, {})).toHaveStatus(401);
    await expect(await postEventsWith("not-a-uuid", "{", {})).toHaveStatus(401);
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
      code: "parameter_missing",
      param: "booking.date",
      error: 'The field "booking.date" is required.',
    });
    const neither = { ok: false, status: 400, code: "invalid_request", error: NEITHER };
    expect(await runtime.reportChange(business.id, {})).toEqual(neither);
    expect(await runtime.reportChange(business.id, null)).toEqual(neither);
    const booking = newBooking();
    await runtime.reportChange(business.id, { booking });
    expect(await runtime.reportChange(business.id, { booking: { ...booking, status: "cancelled" } })).toEqual({
      ok: false,
      status: 400,
      code: "parameter_missing",
      param: "cancelled_by",
      error: 'The field "cancelled_by" is required when a booking is cancelled.',
    });
  });

  it("answers ok:false with status 404 for an unknown business and 400 for an id that is not one", async () => {
    expect(await runtime.reportChange(crypto.randomUUID(), { booking: newBooking() })).toEqual({
      ok: false,
      status: 404,
      code: "not_found",
      error: "No business has that id.",
    });
    expect(await runtime.reportChange("not-a-uuid", { booking: newBooking() })).toEqual({
      ok: false,
      status: 400,
      code: "parameter_invalid",
      param: "id",
      error: 'The path parameter "id" must be a business id (a UUID).',
    });
  });

  it("answers ok:true for a booking of the same id as another business's, which stays theirs", async () => {
    const theirs = newBooking();
    await runtime.reportChange(other.business.id, { booking: theirs });
    expect(await runtime.reportChange(business.id, { booking: { ...theirs, notes: "x" } })).toMatchObject({
      ok: true,
    });
    expect(await appointment(other.apiKey, theirs.id)).toEqual(theirs);
  });
});
