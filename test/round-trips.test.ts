import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../src/db/client";
import { runRead } from "../src/db/reads";
import { apiKeys, bookings, businesses, orders } from "../src/db/schema";
import { API_KEY_PREFIX, authenticatePartner, readCredential } from "../src/domain/access/principals";
import { listAppointments } from "../src/domain/platform/bookings";
import { listOrders } from "../src/domain/platform/orders";
import { randomToken, sha256Hex } from "../src/lib/secrets";
import { bookingRow, createApiKey, createBusiness, insertAll, orderRow } from "./helpers/fixtures";
import { runAlone } from "./helpers/statements";

async function rowsRead(query: { toSQL(): { sql: string; params: unknown[] } }) {
  const { sql, params } = query.toSQL();
  const result = await env.DB.prepare(sql)
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
  const db = database(env.DB);

  it("authenticates with one indexed lookup", async () => {
    const principal = await authenticatePartner(db, `Bearer ${apiKey}`);
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
    ["50 appointments since a date", { limit: 50, since: "2026-06-01" }],
    ["20 confirmed appointments since a date", { limit: 20, status: "confirmed" as const, since: "2026-06-01" }],
  ])("listing %s (a full page) reads exactly the rows it returns", async (_case, filters) => {
    const { rows, rowsRead: read } = await runAlone(listAppointments(business.id, filters).statements[0]);
    expect(rows).toBe(filters.limit);
    expect(read).toBe(rows);
  });

  it.each([
    ["every confirmed appointment", { limit: 100, status: "confirmed" as const }],
    ["every appointment since a date", { limit: 100, since: "2026-10-01" }],
  ])("listing %s (the last page) reads one index entry more: the one that ends the range", async (_case, filters) => {
    const { rows, rowsRead: read } = await runAlone(listAppointments(business.id, filters).statements[0]);
    expect(rows).toBeGreaterThan(0);
    expect(rows).toBeLessThan(filters.limit);
    expect(read).toBe(rows + 1);
  });

  it("listing orders of one status reads exactly the rows it returns", async () => {
    await insertAll(
      orders,
      Array.from({ length: 30 }, (_, i) => orderRow(business.id, { status: i % 2 ? "pending" : "fulfilled" })),
    );
    const { rowsRead: read, rows } = await runAlone(
      listOrders(business.id, { limit: 10, status: "pending" }).statements[0],
    );
    expect(rows).toBe(10);
    expect(read).toBe(10);
  });

  it("scopes a partner read by sub-selects that find only an accepted credential", async () => {
    const revoked = await createApiKey(business.id, { revoked: true });
    const filters = { limit: 100 };
    const pageFor = async (apiKey: string) =>
      runRead(db, listAppointments({ credential: await readCredential(`Bearer ${apiKey}`), now: Date.now() }, filters));
    expect(await pageFor(apiKey)).toHaveLength(100);
    // The read is discarded when the credential is refused; it also selects nothing by itself.
    expect(await pageFor(revoked.apiKey)).toEqual([]);
    expect(await pageFor(randomToken(API_KEY_PREFIX))).toEqual([]);
  });
});
