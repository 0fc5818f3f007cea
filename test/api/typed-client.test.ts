import { describe, expect, it } from "vitest";
import {
  type AnyEvent,
  booking as bookingById,
  bookingsChangedSince,
  confirmedAppointments,
  moveEndpoint,
  PartnerApiError,
  partnerClient,
  subscribeToBookings,
  summary,
  unsubscribe,
} from "../../docs/examples/typed-client/client";
import { bookings } from "../../src/db/schema";
import { bookingRow, createBusiness, insertAll } from "../helpers/fixtures";
import { BASE, dispatch } from "../helpers/http";
import { bookingObject, reportChange } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { verifyWebhookSignature } from "../helpers/verify-signature";

// The typed client of docs/examples/typed-client (docs/openapi.md, The typed client example): its types come from the
// committed openapi.json, so a change of the document that breaks a partner's generated client breaks this file's type
// check or its run.
describe("a partner's typed client (openapi-typescript types, openapi-fetch)", async () => {
  const { business, apiKey } = await createBusiness();
  const client = partnerClient(apiKey, { baseUrl: `${BASE}/api/v1`, fetch: (request) => dispatch(request) });
  await insertAll(bookings, [
    bookingRow(business.id, { date: "2026-12-01", status: "confirmed" }),
    bookingRow(business.id, { date: "2026-12-02", status: "cancelled" }),
    bookingRow(business.id, { date: "2026-11-01", status: "confirmed" }),
  ]);

  it("lists appointments with a typed query and answer", async () => {
    const appointments = await confirmedAppointments(client, "2026-11-15");
    expect(appointments.map((booking) => [booking.date, booking.status])).toEqual([["2026-12-01", "confirmed"]]);
  });

  it("subscribes an endpoint and gets its secret once", async () => {
    const endpoint = await subscribeToBookings(client, "https://partner.example/hooks/calendar");
    expect(endpoint).toMatchObject({
      url: "https://partner.example/hooks/calendar",
      events: ["booking.created", "booking.cancelled"],
      status: "enabled",
    });
    expect(endpoint.secret).toMatch(/^whsec_/);
  });

  it("handles a delivered event by its generated type, after verifying it", async () => {
    const box = receiverBox("typed-client");
    const { secret } = await subscribeToBookings(client, box.url("/hooks"));
    const booking = bookingObject(93_001, { date: "2026-12-24", time: "10:30" });
    await expect(await reportChange(business.id, { booking })).toHaveStatus(201);
    const [request] = await box.arrived(1);
    const body = request?.body ?? "";
    expect(await verifyWebhookSignature(body, request?.headers["x-service-signature"] ?? "", secret)).toBe(true);
    expect(summary(JSON.parse(body) as AnyEvent)).toBe(
      `New booking 93001: ${booking.service.name} on 2026-12-24 at 10:30 for ${booking.client.name}`,
    );
  });

  it("answers a refused call as the typed error, with its code and request id", async () => {
    const refused = partnerClient("sk_live_not-a-key", { baseUrl: `${BASE}/api/v1`, fetch: (r) => dispatch(r) });
    const error = await confirmedAppointments(refused, "2026-11-15").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PartnerApiError);
    expect(error).toMatchObject({
      code: "invalid_credential",
      param: undefined,
      message: "The API key is not recognised.",
    });
    expect((error as PartnerApiError).requestId).toMatch(/\S/);
  });

  it("changes and removes an endpoint by the integer id its subscription answered", async () => {
    const { id, secret } = await subscribeToBookings(client, "https://partner.example/hooks/old");
    const moved = await moveEndpoint(client, id, "https://partner.example/hooks/new");
    expect(moved).toMatchObject({
      id,
      url: "https://partner.example/hooks/new",
      events: ["booking.created", "booking.cancelled", "booking.rescheduled"],
    });
    expect(moved).not.toHaveProperty("secret");
    expect(secret).toMatch(/^whsec_/);
    await unsubscribe(client, id);
    const again = await unsubscribe(client, id).catch((caught: unknown) => caught);
    expect(again).toMatchObject({ code: "not_found" });
  });

  it("syncs the bookings changed since a time, page by page, and reads one by the id it received", async () => {
    const since = new Date().toISOString();
    for (let i = 0; i < 3; i++) {
      const report = await reportChange(business.id, {
        booking: bookingObject(93_100 + i, { date: `2027-01-0${i + 1}` }),
      });
      await expect(report).toHaveStatus(201);
    }
    const changed = await bookingsChangedSince(client, since);
    expect(changed.map((item) => item.id).sort()).toEqual([93_100, 93_101, 93_102]);
    const [first] = changed;
    expect(await bookingById(client, first?.id ?? 0)).toEqual(first);
  });
});
