import { and, eq, fillPlaceholders, gte } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { shardDatabase } from "../../src/db/client";
import { runRead } from "../../src/db/reads";
import { apiKeys, bookings, businesses, orders } from "../../src/db/schema";
import { API_KEY_PREFIX, authenticatePartner, readCredential } from "../../src/domain/access/principals";
import { listAppointments } from "../../src/domain/platform/bookings";
import { listOrders } from "../../src/domain/platform/orders";
import { randomToken, sha256Hex } from "../../src/lib/secrets";
import { deps } from "../helpers/dependencies";
import { bookingRow, createApiKey, createBusiness, insertAll, orderRow, shardD1 } from "../helpers/fixtures";
import { queryPlan } from "../helpers/query-plan";
import { runAlone } from "../helpers/statements";

async function rowsRead(query: { toSQL(): { sql: string; params: unknown[] } }) {
  const { sql, params } = query.toSQL();
  const result = await shardD1
    .prepare(sql)
    .bind(...params)
    .all();
  return { rows: result.results.length, rowsRead: result.meta.rows_read };
}

describe("hot paths: D1 round trips and rows read", async () => {
  const { business, apiKey } = await createBusiness();
  const statuses = ["confirmed", "completed", "cancelled", "no_show"] as const;
  await insertAll(
    bookings,
    Array.from({ length: 300 }, (_, i) =>
      bookingRow(business.id, {
        date: `2026-${String(1 + (i % 12)).padStart(2, "0")}-${String(1 + (i % 28)).padStart(2, "0")}`,
        status: statuses[i % 4],
      }),
    ),
  );
  // Another business's rows share the index and must not be read either.
  const other = await createBusiness();
  await insertAll(
    bookings,
    Array.from({ length: 150 }, () => bookingRow(other.business.id)),
  );
  const db = shardDatabase(shardD1);

  it("authenticates with one indexed lookup", async () => {
    const principal = await authenticatePartner(deps, `Bearer ${apiKey}`);
    expect(principal.business.id).toBe(business.id);
    // The same lookup as authenticatePartner: the key found by its hash's unique index, joined with its business.
    const query = db
      .select({ apiKeyId: apiKeys.id, revokedAt: apiKeys.revokedAt, business: businesses })
      .from(apiKeys)
      .innerJoin(businesses, eq(businesses.id, apiKeys.businessId))
      .where(eq(apiKeys.keyHash, sha256Hex(apiKey)));
    const { rows, rowsRead: read } = await rowsRead(query);
    expect(rows).toBe(1);
    // Two rows: the key and its business. No scan, however many keys and businesses there are.
    expect(read).toBe(2);
  });

  it.each([
    ["100 appointments", { limit: 100 }],
    ["50 confirmed appointments", { limit: 50, status: "confirmed" as const }],
  ])("listing %s (a full page) reads exactly the rows it returns", async (_case, filters) => {
    const { rows, rowsRead: read } = await runAlone(listAppointments(business.id, filters).statements[0]);
    // The page and one more, which says `has_more` (docs/decisions.md, Paging and sync).
    expect(rows).toBe(filters.limit + 1);
    expect(read).toBe(rows);
  });

  it.each([["every confirmed appointment", { limit: 100, status: "confirmed" as const }]])(
    "listing %s (the last page) reads one index entry more: the one that ends the range",
    async (_case, filters) => {
      const { rows, rowsRead: read } = await runAlone(listAppointments(business.id, filters).statements[0]);
      expect(rows).toBeGreaterThan(0);
      expect(rows).toBeLessThan(filters.limit);
      expect(read).toBe(rows + 1);
    },
  );

  // With `since`, the newest booked are not the rows of a date range: the range of the date index is read, and
  // sorted by booking (each row counted once in the index and once in the sort). The
  // read is bounded by the appointments on or after `since`, never by every booking the business ever had.
  it.each([
    ["50 appointments since a date", { limit: 50, since: "2026-06-01" }],
    ["20 confirmed appointments since a date", { limit: 20, status: "confirmed" as const, since: "2026-06-01" }],
    ["every appointment since a date", { limit: 100, since: "2026-10-01" }],
  ])("listing %s reads the appointments on or after it, sorted by booking", async (_case, filters) => {
    const { rows, rowsRead: read } = await runAlone(listAppointments(business.id, filters).statements[0]);
    const { status, since } = filters as { status?: string; since: string };
    const inRange = await db.$count(
      bookings,
      and(
        eq(bookings.businessId, business.id),
        gte(bookings.date, since),
        status === undefined ? undefined : eq(bookings.status, status as "confirmed"),
      ),
    );
    expect(rows).toBe(Math.min(filters.limit + 1, inRange));
    // The entry that ends the range is read when there is one: another status's, or another business's.
    expect(read).toBeGreaterThanOrEqual(2 * inRange);
    expect(read).toBeLessThanOrEqual(2 * inRange + 1);
  });

  it.each([
    [{ limit: 100 }, "bookings_business_created (business_id=?)", false],
    [
      { limit: 50, status: "confirmed" as const },
      "bookings_business_status_created (business_id=? AND status=?)",
      false,
    ],
    [{ limit: 50, since: "2026-06-01" }, "bookings_business_date (business_id=? AND date>?)", true],
    [
      { limit: 20, status: "confirmed" as const, since: "2026-06-01" },
      "bookings_business_status_date (business_id=? AND status=? AND date>?)",
      true,
    ],
  ])("lists appointments %o through the index %s", async (filters, index, sorted) => {
    const statement = listAppointments(business.id, filters).statements[0];
    if (!statement) throw new Error("No statement in the read.");
    const { sql, params } = statement.prepared(db).query;
    const details = await queryPlan(shardD1, sql, fillPlaceholders(params, statement.values));
    expect(details).toContain(`SEARCH bookings USING INDEX ${index}`);
    expect(details.includes("USE TEMP B-TREE FOR ORDER BY")).toBe(sorted);
  });

  it("listing orders of one status reads exactly the rows it returns", async () => {
    await insertAll(
      orders,
      Array.from({ length: 30 }, (_, i) => orderRow(business.id, { status: i % 2 ? "pending" : "fulfilled" })),
    );
    const { rowsRead: read, rows } = await runAlone(
      listOrders(business.id, { limit: 10, status: "pending" }).statements[0],
    );
    expect(rows).toBe(11);
    expect(read).toBe(11);
  });

  it("scopes a partner read by sub-selects that find only an accepted credential", async () => {
    const revoked = await createApiKey(business.id, { revoked: true });
    const filters = { limit: 100 };
    const pageFor = async (apiKey: string) =>
      runRead(db, listAppointments({ credential: await readCredential(`Bearer ${apiKey}`), now: Date.now() }, filters));
    expect((await pageFor(apiKey)).data).toHaveLength(100);
    // The read is discarded when the credential is refused; it also selects nothing by itself.
    expect(await pageFor(revoked.apiKey)).toEqual({ data: [], hasMore: false });
    expect(await pageFor(randomToken(API_KEY_PREFIX))).toEqual({ data: [], hasMore: false });
  });
});
