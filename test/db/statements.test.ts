import { and, eq, gte } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { runRead } from "../../src/db/reads";
import { bookings } from "../../src/db/schema";
import { runStatements, statement } from "../../src/db/statements";
import { readCredential } from "../../src/domain/access/principals";
import { listAppointments } from "../../src/domain/platform/bookings";
import { bookingRow, createApiKey, createBusiness, db, insertAll } from "../helpers/fixtures";

describe("statements rendered once per shape (src/db/statements.ts)", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();
  await insertAll(bookings, [
    bookingRow(business.id, { date: "2026-03-01", status: "confirmed" }),
    bookingRow(business.id, { date: "2026-05-01", status: "cancelled" }),
    bookingRow(other.business.id, { date: "2026-05-02", status: "confirmed" }),
  ]);

  it("builds a shape's SQL once, whatever the values, and binds each use's own values", async () => {
    let builds = 0;
    const page = statement<{ business: string; since?: string }>()((database, { business, since }) => {
      builds += 1;
      return database
        .select({ date: bookings.date })
        .from(bookings)
        .where(and(eq(bookings.businessId, business), since === undefined ? undefined : gte(bookings.date, since)));
    });
    const dates = async (args: { business: string; since?: string }) =>
      ((await runStatements(db, [page(args)]))[0] as { date: string }[]).map((row) => row.date).sort();

    expect(await dates({ business: business.id })).toEqual(["2026-03-01", "2026-05-01"]);
    expect(await dates({ business: other.business.id })).toEqual(["2026-05-02"]);
    expect(builds).toBe(1);
    // Another shape (a filter given) is built once too, and the first shape is still served as it was.
    expect(await dates({ business: business.id, since: "2026-04-01" })).toEqual(["2026-05-01"]);
    expect(await dates({ business: other.business.id, since: "2026-06-01" })).toEqual([]);
    expect(await dates({ business: business.id })).toEqual(["2026-03-01", "2026-05-01"]);
    expect(builds).toBe(2);
  });

  it("keeps the owner's, a key's credential and a principal's shapes of one read apart", async () => {
    const sibling = await createApiKey(business.id);
    const stranger = await createApiKey(other.business.id);
    const page = async (reach: Parameters<typeof listAppointments>[0]) =>
      (await runRead(db, listAppointments(reach, { limit: 100 }))).data.map((booking) => booking.date).sort();
    const credential = async (key: string) => ({ credential: await readCredential(`Bearer ${key}`), now: Date.now() });

    expect(await page(business.id)).toEqual(["2026-03-01", "2026-05-01"]);
    expect(await page(await credential(apiKey))).toEqual(["2026-03-01", "2026-05-01"]);
    expect(await page(await credential(sibling.apiKey))).toEqual(["2026-03-01", "2026-05-01"]);
    expect(await page(await credential(stranger.apiKey))).toEqual(["2026-05-02"]);
    expect(await page(other.business.id)).toEqual(["2026-05-02"]);
  });
});
