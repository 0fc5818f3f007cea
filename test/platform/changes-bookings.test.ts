import { describe, expect, it } from "vitest";
import { createBusiness } from "../helpers/fixtures";
import { expectError } from "../helpers/http";
import { reportChange } from "../helpers/platform";
import {
  appointment,
  eventCount,
  expectEmitted,
  expectNothingEmitted,
  newBooking,
  storedEnvelope,
} from "../helpers/platform-changes";

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
