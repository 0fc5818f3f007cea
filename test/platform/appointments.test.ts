import { describe, expect, it } from "vitest";
import { bookings } from "../../src/db/schema";
import { bookingRow, createBusiness, insertAll } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";

type Page = {
  data: Array<Record<string, unknown> & { id: number; date: string; time: string; status: string; created_at: string }>;
};

const BOOKING_FIELDS = [
  "id",
  "status",
  "date",
  "time",
  "duration_minutes",
  "service",
  "client",
  "payment",
  "location",
  "notes",
  "reschedule_count",
  "original_date",
  "original_time",
  "links",
  "conversation_id",
  "created_at",
  "updated_at",
].sort();

describe("GET /api/v1/appointments", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();
  const statuses = ["confirmed", "completed", "cancelled", "no_show", "pending"] as const;
  // 40 bookings over 20 days, two a day (09:00 and 14:30), statuses in rotation, booked an hour apart on 1 and 2
  // November in an order unrelated to their dates (17 and 40 share no factor: each hour once).
  const rows = Array.from({ length: 40 }, (_, i) =>
    bookingRow(business.id, {
      date: `2026-12-${String(1 + Math.floor(i / 2)).padStart(2, "0")}`,
      time: i % 2 === 0 ? "09:00" : "14:30",
      status: statuses[i % statuses.length],
      createdAt: new Date(Date.UTC(2026, 10, 1) + ((i * 17) % 40) * 3_600_000).toISOString(),
    }),
  );
  // Booked at the same instant: the higher id comes first.
  const twins = [1, 2].map(() =>
    bookingRow(business.id, { date: "2026-12-05", time: "12:00", createdAt: "2026-11-20T12:00:00.000Z" }),
  );
  // The latest appointment, and the most recent booking.
  const moved = bookingRow(business.id, {
    date: "2027-01-05",
    time: "11:15",
    rescheduleCount: 1,
    originalDate: "2026-12-30",
    originalTime: "10:00",
    paymentStatus: "paid",
    paymentAmountPaid: 35,
    paymentAgreedAmount: 30,
    paymentReference: "pi_123",
    location: "https://meet.example/abc",
    notes: "Bring photos",
    conversationId: "conv_77",
    rescheduleLink: null,
    cancelLink: null,
    clientEmail: null,
    createdAt: "2026-11-30T09:00:00.000Z",
    updatedAt: "2026-12-02T16:20:00.000Z",
  });
  const foreign = bookingRow(other.business.id, { date: "2027-02-01" });
  await insertAll(bookings, [...rows, ...twins, moved, foreign]);
  const mine = [...rows, ...twins, moved];
  /** The documented order: the most recently booked first, then the higher id. */
  const newestBooked = (list: typeof mine) =>
    [...list].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id - a.id).map((b) => b.id);
  const list = async (query = "") => call(`/api/v1/appointments${query}`, { key: apiKey });

  it("answers { data, has_more } with 25 bookings by default, the most recently booked first", async () => {
    const response = await list();
    await expect(response).toHaveStatus(200);
    const body = await json<Page>(response);
    expect(Object.keys(body)).toEqual(["data", "has_more"]);
    expect(body).toMatchObject({ has_more: true });
    expect(body.data.map((b) => b.id)).toEqual(newestBooked(mine).slice(0, 25));
    expect(body.data.slice(0, 3).map((b) => b.id)).toEqual([moved.id, twins[1]?.id, twins[0]?.id]);
    // Booked on 2 November at 15:00 (hour 39), its appointment is on 4 December.
    expect(body.data[3]).toMatchObject({ id: rows[7]?.id, date: "2026-12-04", time: "14:30" });
  });

  it("orders by when the booking was made, not by the appointment's date", async () => {
    const body = await json<Page>(await list("?limit=100"));
    expect(body.data.map((b) => b.id)).toEqual(newestBooked(mine));
    const appointments = body.data.map((b) => `${b.date} ${b.time}`);
    expect(appointments).not.toEqual([...appointments].sort().reverse());
    const created = body.data.map((b) => b.created_at);
    expect(created).toEqual([...created].sort().reverse());
  });

  it("returns exactly the fields of a booking, nested (docs/guides/syncing.md, Booking and order objects)", async () => {
    const body = await json<Page>(await list("?limit=1"));
    const booking = body.data[0];
    expect(Object.keys(booking ?? {}).sort()).toEqual(BOOKING_FIELDS);
    expect(booking).toEqual({
      id: moved.id,
      status: "confirmed",
      date: "2027-01-05",
      time: "11:15",
      duration_minutes: 45,
      service: { id: "svc_cut", name: "Haircut", price: "€35" },
      client: { name: "Ana Souza", email: null, phone: "+31612345678" },
      payment: { status: "paid", amount_paid: 35, agreed_amount: 30, currency: "EUR", reference: "pi_123" },
      location: "https://meet.example/abc",
      notes: "Bring photos",
      reschedule_count: 1,
      original_date: "2026-12-30",
      original_time: "10:00",
      links: null,
      conversation_id: "conv_77",
      created_at: moved.createdAt,
      updated_at: "2026-12-02T16:20:00.000Z",
    });
  });

  it("gives the client's own links when the booking has them", async () => {
    const body = await json<Page>(await list("?limit=2"));
    const second = twins[1];
    expect(body.data[1]?.id).toBe(second?.id);
    expect(body.data[1]?.links).toEqual({ reschedule: second?.rescheduleLink, cancel: second?.cancelLink });
  });

  it.each([1, 2, 50, 100])("honours limit=%i", async (limit) => {
    const body = await json<Page>(await list(`?limit=${limit}`));
    expect(body.data).toHaveLength(Math.min(limit, mine.length));
  });

  it.each(["0", "101", "-1", "abc", "2.5", "1e1", "", "0x10"])(
    "refuses limit=%s with 400 naming the parameter",
    async (limit) => {
      const response = await list(`?limit=${limit}`);
      await expectError(response, 400, 'The query parameter "limit" must be a whole number from 1 to 100.', {
        code: "parameter_invalid",
        param: "limit",
      });
    },
  );

  it.each(statuses)("filters by status=%s", async (status) => {
    const body = await json<Page>(await list(`?status=${status}&limit=100`));
    expect(body.data.map((b) => b.id)).toEqual(newestBooked(mine.filter((b) => b.status === status)));
    expect(body.data.every((b) => b.status === status)).toBe(true);
  });

  it("refuses an unknown status with 400 naming the parameter and the allowed values", async () => {
    const response = await list("?status=lost");
    await expect(response).toHaveStatus(400);
    const { error } = await json(response);
    expect(error).toBe(
      'The query parameter "status" must be one of "pending", "confirmed", "completed", "cancelled", "no_show".',
    );
  });

  it("keeps only appointments on or after since, still the most recently booked first", async () => {
    const body = await json<Page>(await list("?since=2026-12-19&limit=100"));
    expect(body.data.map((b) => `${b.date} ${b.time}`)).toEqual([
      "2027-01-05 11:15",
      "2026-12-19 14:30",
      "2026-12-20 14:30",
      "2026-12-19 09:00",
      "2026-12-20 09:00",
    ]);
    expect(body.data.map((b) => b.id)).toEqual(newestBooked(mine.filter((b) => b.date >= "2026-12-19")));
  });

  it("filters since on the appointment's date, not on when it was booked", async () => {
    // Every booking was made in November and every appointment is in December or later.
    const body = await json<Page>(await list("?since=2026-11-15&limit=100"));
    expect(body.data.map((b) => b.id)).toEqual(newestBooked(mine));
    expect(await json<Page>(await list("?since=2027-01-06"))).toEqual({ data: [], has_more: false });
  });

  it("combines status, since and limit", async () => {
    const body = await json<Page>(await list("?status=confirmed&since=2026-12-10&limit=2"));
    const expected = newestBooked(mine.filter((b) => b.status === "confirmed" && b.date >= "2026-12-10")).slice(0, 2);
    expect(expected).toHaveLength(2);
    expect(body.data.map((b) => b.id)).toEqual(expected);
  });

  it.each(["2026-13-01", "2026-02-30", "26-12-01", "2026-1-5", "yesterday", "2026-12-01T00:00:00Z"])(
    "refuses since=%s with 400 naming the parameter",
    async (since) => {
      const response = await list(`?since=${encodeURIComponent(since)}`);
      await expect(response).toHaveStatus(400);
      expect((await json(response)).error).toMatch(
        /^The query parameter "since" must be a (date written YYYY-MM-DD|real calendar date)\.$/,
      );
    },
  );

  it("never returns another business's bookings", async () => {
    const page = await json<Page>(await list("?limit=100"));
    expect(page.data.map((b) => b.id)).not.toContain(foreign.id);
    const theirs = await json<Page>(await call("/api/v1/appointments", { key: other.apiKey }));
    expect(theirs.data.map((b) => b.id)).toEqual([foreign.id]);
  });

  it("answers an empty page for a business without bookings", async () => {
    const empty = await createBusiness();
    expect(await json(await call("/api/v1/appointments", { key: empty.apiKey }))).toEqual({
      data: [],
      has_more: false,
    });
  });
});
