import { eq, fillPlaceholders } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { bookings, events, orders } from "../../src/db/schema";
import type { Bound } from "../../src/db/statements";
import type { Credential } from "../../src/domain/access/principals";
import type { Reach } from "../../src/domain/access/scope";
import { listAppointments } from "../../src/domain/platform/bookings";
import { reportChange } from "../../src/domain/platform/changes";
import { listOrders } from "../../src/domain/platform/orders";
import type { BookingObject } from "../../src/schemas/booking";
import type { OrderObject } from "../../src/schemas/order";
import { testDependencies } from "../helpers/dependencies";
import { bookingRow, createBusiness, DEFAULT_SHARD, db, insertAll, orderRow, shardD1 } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { reportChange as reportOverHttp } from "../helpers/platform";
import { newBooking, newOrder } from "../helpers/platform-changes";
import { queryPlan } from "../helpers/query-plan";
import { roundTrips } from "../helpers/round-trips";

// docs/decisions.md, Paging and sync: GET /appointments and GET /orders page newest created first with starting_after
// and has_more, filter on the service's updated_at with updated_since, and GET /appointments/{id} and GET /orders/{id}
// answer one object; each in one D1 round trip.

type Listed = { id: number; status: string; created_at: string; updated_at: string };
type Page = { data: Listed[]; has_more: boolean };

const KINDS = [
  { name: "bookings", path: "/api/v1/appointments", record: "booking", table: bookings, row: bookingRow },
  { name: "orders", path: "/api/v1/orders", record: "order", table: orders, row: orderRow },
] as const;

/** The documented order: created_at descending, then id descending. */
const newestFirst = (rows: Array<{ id: number; createdAt: string }>) =>
  [...rows].sort((a, b) => b.createdAt.localeCompare(a.createdAt) || b.id - a.id).map((row) => row.id);

/** A report of the core platform made through the service's own path, at the instant `at` of a driven clock. */
const reportAt = (at: string, businessId: string, body: unknown) =>
  reportChange(testDependencies(DEFAULT_SHARD, { clock: () => Date.parse(at) }), businessId, body);

/** A new booking or order (newest created of all), reported through the service's own path; answers its id. */
const reportNew = async (kind: (typeof KINDS)[number], businessId: string) => {
  const object = kind.name === "bookings" ? newBooking() : newOrder();
  const response = await reportOverHttp(businessId, { [kind.record]: object });
  await expect(response).toHaveStatus(201);
  return object.id;
};

describe.each(KINDS)("paging $name with starting_after and has_more", async (kind) => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();
  const statuses =
    kind.name === "bookings" ? (["confirmed", "cancelled"] as const) : (["pending", "fulfilled"] as const);
  // 250 created in January 2026, two at each minute (the higher id first within a minute), statuses alternating.
  const start = Date.parse("2026-01-05T08:00:00.000Z");
  const rows = Array.from({ length: 250 }, (_, i) => {
    const createdAt = new Date(start + Math.floor(i / 2) * 60_000).toISOString();
    return kind.row(business.id, { createdAt, updatedAt: createdAt, status: statuses[(i >> 1) % 2] as never });
  });
  const foreign = kind.row(other.business.id);
  await insertAll(kind.table, [...rows, foreign] as never);
  const list = async (query: string) => {
    const response = await call(`${kind.path}${query}`, { key: apiKey });
    await expect(response).toHaveStatus(200);
    return json<Page>(response);
  };

  it("pages through 250 in three pages, none missed or repeated, while new ones arrive between pages", async () => {
    const pages: Page[] = [];
    const arrived: number[] = [];
    let query = "?limit=100";
    for (;;) {
      const page = await list(query);
      pages.push(page);
      if (!page.has_more) break;
      // Reported between pages through the service's own path: created after every page's cursor, so they are newer
      // than it and belong to no later page.
      arrived.push(await reportNew(kind, business.id), await reportNew(kind, business.id));
      query = `?limit=100&starting_after=${page.data.at(-1)?.id}`;
    }
    expect(pages.map((page) => [page.data.length, page.has_more])).toEqual([
      [100, true],
      [100, true],
      [50, false],
    ]);
    const seen = pages.flatMap((page) => page.data.map((item) => item.id));
    expect(seen).toEqual(newestFirst(rows));
    expect(new Set(seen).size).toBe(250);
    expect(seen.filter((id) => arrived.includes(id))).toEqual([]);
    // The new ones are at the head of the list.
    const head = await list("?limit=4");
    expect(head.data.map((item) => item.id).sort()).toEqual([...arrived].sort());
  });

  it("combines the status filter with the cursor: pages of one status, in order, none missed", async () => {
    // Not the status of the new ones reported above.
    const [, status] = statuses;
    const matching = rows.filter((row) => row.status === status);
    const seen: number[] = [];
    let query = `?status=${status}&limit=40`;
    for (let pages = 0; ; pages++) {
      const page = await list(query);
      expect(page.data.every((item) => item.status === status)).toBe(true);
      seen.push(...page.data.map((item) => item.id));
      if (!page.has_more) break;
      query = `?status=${status}&limit=40&starting_after=${page.data.at(-1)?.id}`;
      expect(pages).toBeLessThan(5);
    }
    expect(seen).toEqual(newestFirst(matching));
    // A cursor of the other status still places the page: what follows it in the order, of this status.
    const cursor = rows.find((row) => row.status !== status);
    const after = await list(`?status=${status}&limit=100&starting_after=${cursor?.id}`);
    const position = newestFirst(rows).indexOf(cursor?.id ?? 0);
    const expected = newestFirst(rows)
      .slice(position + 1)
      .filter((id) => matching.some((row) => row.id === id));
    expect(after.data.map((item) => item.id)).toEqual(expected);
  });

  it("answers an empty last page after the oldest one", async () => {
    const oldest = newestFirst(rows).at(-1);
    expect(await list(`?starting_after=${oldest}`)).toEqual({ data: [], has_more: false });
  });

  it.each(["abc", "0", "-1", "1.5", "1e3", ""])(
    "refuses starting_after=%s with 400 naming the parameter",
    async (value) => {
      const response = await call(`${kind.path}?starting_after=${value}`, { key: apiKey });
      await expectError(
        response,
        400,
        `The query parameter "starting_after" must be ${kind.record === "order" ? "an" : "a"} ${kind.record} id: a whole number from 1.`,
        { code: "parameter_invalid", param: "starting_after" },
      );
    },
  );

  it("refuses a starting_after of another business, or of none, with 400 naming the parameter", async () => {
    for (const id of [foreign.id, 999_999_999]) {
      const response = await call(`${kind.path}?starting_after=${id}`, { key: apiKey });
      await expectError(
        response,
        400,
        `The query parameter "starting_after" names no ${kind.record} of this business.`,
        {
          code: "parameter_invalid",
          param: "starting_after",
        },
      );
    }
  });

  it.each(["yesterday", "2026-03-01", "2026-03-01T10:00:00", "2026-02-30T10:00:00Z", "1772359200"])(
    "refuses updated_since=%s with 400 naming the parameter",
    async (value) => {
      const response = await call(`${kind.path}?updated_since=${encodeURIComponent(value)}`, { key: apiKey });
      await expectError(response, 400, /^The query parameter "updated_since" must be /, {
        code: "parameter_invalid",
        param: "updated_since",
      });
    },
  );

  it("answers GET {id} with the object the list shows; 404 for another business's id, an unknown one, or no number", async () => {
    const [first] = (await list("?limit=1")).data;
    const response = await call(`${kind.path}/${first?.id}`, { key: apiKey });
    await expect(response).toHaveStatus(200);
    expect(await json(response)).toEqual(first);
    const missing = `No ${kind.record} with that id exists for this credential.`;
    for (const id of [foreign.id, 999_999_999, "abc", "0", "1e3", "-4"]) {
      const refused = await call(`${kind.path}/${id}`, { key: apiKey });
      await expect(refused, String(id)).toHaveStatus(404);
      expect((await json(refused)).error).toBe(missing);
    }
    // The other business reads its own.
    await expect(await call(`${kind.path}/${foreign.id}`, { key: other.apiKey })).toHaveStatus(200);
  });

  it("makes one D1 round trip for a page after a cursor with every filter, and for one object", async () => {
    const [cursor] = newestFirst(rows);
    const filters = `status=${statuses[0]}&updated_since=2026-01-05T09:00:00Z&limit=10&starting_after=${cursor}`;
    for (const path of [`${kind.path}?${filters}`, `${kind.path}/${cursor}`]) {
      // The first request of an hour also records the key's use, after its answer (not counted either way).
      const { response, trips } = await roundTrips(path, { key: apiKey });
      await expect(response, path).toHaveStatus(200);
      expect(trips, path).toHaveLength(1);
    }
  });
});

describe("updated_since: a sync returns what changed, with its new state and updated_at", async () => {
  const { business, apiKey } = await createBusiness();
  // Reported on 1 February; then one booking is cancelled and one order starts being prepared on 1 March at 10:00.
  const before = "2026-02-01T12:00:00.000Z";
  const changedAt = "2026-03-01T10:00:00.000Z";
  const booked = Array.from({ length: 5 }, (_, i) =>
    newBooking({ created_at: `2026-01-1${i}T09:00:00.000Z`, status: "confirmed" }),
  );
  const placed = Array.from({ length: 5 }, (_, i) =>
    newOrder({ created_at: `2026-01-1${i}T12:00:00.000Z`, status: "confirmed" }),
  );
  for (const booking of booked) await reportAt(before, business.id, { booking });
  for (const order of placed) await reportAt(before, business.id, { order });
  const [, cancelled] = booked;
  const [, , preparing] = placed;
  if (!cancelled || !preparing) throw new Error("no fixtures");
  const [bookingEvent] = await reportAt(changedAt, business.id, {
    booking: { ...cancelled, status: "cancelled" },
    cancelled_by: "client",
  });
  const [orderEvent] = await reportAt(changedAt, business.id, { order: { ...preparing, status: "preparing" } });
  const sync = async (path: string, since: string) => {
    const response = await call(`${path}?updated_since=${encodeURIComponent(since)}`, { key: apiKey });
    await expect(response).toHaveStatus(200);
    return json<Page>(response);
  };

  it.each([
    ["/api/v1/appointments", cancelled.id, "cancelled"],
    ["/api/v1/orders", preparing.id, "preparing"],
  ])("%s?updated_since before the change returns exactly the changed one", async (path, id, status) => {
    for (const since of ["2026-03-01T09:59:59.000Z", "2026-03-01T10:59:59+01:00", changedAt]) {
      const page = await sync(path, since);
      expect(page.has_more).toBe(false);
      expect(page.data.map((item) => [item.id, item.status, item.updated_at])).toEqual([[id, status, changedAt]]);
    }
    // A millisecond after the change: nothing; before every report: all five, newest created first.
    expect(await sync(path, "2026-03-01T10:00:00.001Z")).toEqual({ data: [], has_more: false });
    const all = await sync(path, "2026-02-01T00:00:00Z");
    expect(all.data.map((item) => item.created_at)).toEqual(
      all.data
        .map((item) => item.created_at)
        .sort()
        .reverse(),
    );
    expect(all.data.map((item) => item.updated_at).sort()).toEqual([before, before, before, before, changedAt]);
  });

  it("stamps updated_at only when a report changes the object: the same report again leaves it", async () => {
    const untouched = booked[0];
    expect(await reportAt("2026-04-01T00:00:00.000Z", business.id, { booking: untouched })).toEqual([]);
    const response = await call(`/api/v1/appointments/${untouched?.id}`, { key: apiKey });
    expect((await json<BookingObject>(response)).updated_at).toBe(before);
  });

  it("ignores an updated_at sent by the core platform: the stamp is the service's", async () => {
    const echoed = { ...placed[4], notes: "Ring twice", updated_at: "2030-01-01T00:00:00.000Z" } as OrderObject;
    await reportAt("2026-03-02T08:00:00.000Z", business.id, { order: echoed });
    const read = await json<OrderObject>(await call(`/api/v1/orders/${echoed.id}`, { key: apiKey }));
    expect(read).toMatchObject({ notes: "Ring twice", updated_at: "2026-03-02T08:00:00.000Z" });
  });

  it("delivers in the event the object a read answers, updated_at included", async () => {
    for (const [emitted, path] of [
      [bookingEvent, `/api/v1/appointments/${cancelled.id}`],
      [orderEvent, `/api/v1/orders/${preparing.id}`],
    ] as const) {
      const stored = await db
        .select()
        .from(events)
        .where(eq(events.id, emitted?.id ?? ""))
        .get();
      const data = JSON.parse(stored?.envelope ?? "{}").data as { booking?: BookingObject; order?: OrderObject };
      const read = await json<Listed>(await call(path, { key: apiKey }));
      expect(data.booking ?? data.order).toEqual(read);
      expect(read.updated_at).toBe(changedAt);
    }
  });

  it("carries the stamp in payment.received too, as the snapshot the payment stored", async () => {
    const paidAt = "2026-03-03T15:30:00.000Z";
    const booking = { ...booked[2], payment: { ...booked[2]?.payment, status: "paid", amount_paid: 30.5 } };
    const body = {
      event: "payment.received",
      data: { kind: "booking", amount: 30.5, currency: "EUR", reference: "pay_1", booking },
    };
    const emitted = await reportAt(paidAt, business.id, body);
    const payment = emitted.find((event) => event.event === "payment.received");
    const stored = await db
      .select()
      .from(events)
      .where(eq(events.id, payment?.id ?? ""))
      .get();
    const read = await json<BookingObject>(await call(`/api/v1/appointments/${booking.id}`, { key: apiKey }));
    expect(JSON.parse(stored?.envelope ?? "{}").data.booking).toEqual(read);
    expect(read.updated_at).toBe(paidAt);
  });
});

describe("the statements of paging and sync: their plans and bound parameters", async () => {
  const { business } = await createBusiness();
  const start = Date.parse("2026-01-01T00:00:00.000Z");
  const at = (minutes: number) => new Date(start + minutes * 60_000).toISOString();
  await insertAll(
    bookings,
    Array.from({ length: 120 }, (_, i) => bookingRow(business.id, { createdAt: at(i), updatedAt: at(i) })),
  );
  await insertAll(
    orders,
    Array.from({ length: 120 }, (_, i) => orderRow(business.id, { createdAt: at(i), updatedAt: at(i) })),
  );
  const [cursor] = await db
    .select({ id: bookings.id })
    .from(bookings)
    .where(eq(bookings.businessId, business.id))
    .limit(1)
    .offset(60);
  const [orderCursor] = await db
    .select({ id: orders.id })
    .from(orders)
    .where(eq(orders.businessId, business.id))
    .limit(1)
    .offset(60);

  async function plan(statement: Bound<unknown> | undefined) {
    if (!statement) throw new Error("No statement in the read.");
    const { sql, params } = statement.prepared(db).query;
    return queryPlan(shardD1, sql, fillPlaceholders(params, statement.values));
  }

  it.each([
    [
      "bookings after a cursor",
      () => listAppointments(business.id, { limit: 25, startingAfter: cursor?.id }),
      "SEARCH bookings USING INDEX bookings_business_created (business_id=? AND created_at<?)",
      false,
    ],
    [
      "orders after a cursor",
      () => listOrders(business.id, { limit: 25, startingAfter: orderCursor?.id }),
      "SEARCH orders USING INDEX orders_business_created (business_id=? AND created_at<?)",
      false,
    ],
    [
      "bookings updated since",
      () => listAppointments(business.id, { limit: 25, updatedSince: at(100) }),
      "SEARCH bookings USING INDEX bookings_business_updated (business_id=? AND updated_at>?)",
      true,
    ],
    [
      "orders updated since",
      () => listOrders(business.id, { limit: 25, updatedSince: at(100) }),
      "SEARCH orders USING INDEX orders_business_updated (business_id=? AND updated_at>?)",
      true,
    ],
  ])("reads %s through the index: %s", async (_case, read, index, sorted) => {
    const details = await plan(read().statements[0]);
    expect(details).toContain(index);
    expect(details.includes("USE TEMP B-TREE FOR ORDER BY")).toBe(sorted);
  });

  it("binds 10 parameters for a page of bookings with every filter, 9 for orders, with an access token (D1 binds 100)", async () => {
    const credential: Credential = { kind: "access_token", hash: "0".repeat(64), shard: "legacy" };
    const side: Reach = { credential, now: Date.now() };
    const filters = { limit: 25, status: "confirmed" as const, updatedSince: at(1), startingAfter: 1 };
    const bound = (statement: Bound<unknown> | undefined) => statement?.prepared(db).query.params.length;
    expect(bound(listAppointments(side, { ...filters, since: "2026-01-01" }).statements[0])).toBe(10);
    expect(bound(listOrders(side, filters).statements[0])).toBe(9);
  });
});
