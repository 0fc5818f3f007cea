import { eq, is, Placeholder } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { bookings } from "../../src/db/schema";
import { argumentShape, runStatements, type ShapedArgument, statement } from "../../src/db/statements";
import { bookingRow, createBusiness, db, insertAll } from "../helpers/fixtures";

/*
 * A statement's SQL depends on its shape only, never on a value (src/db/statements.ts): a shaped argument's part of
 * the shape is its declaration, whose builder is given placeholders only.
 */
describe("argument shapes (src/db/statements.ts)", async () => {
  const { business } = await createBusiness();
  const other = await createBusiness();
  await insertAll(bookings, [
    bookingRow(business.id, { date: "2026-03-01" }),
    bookingRow(other.business.id, { date: "2026-05-02" }),
  ]);
  let builds = 0;
  const datesOf = statement<{ reach: ShapedArgument<Placeholder> }>()((database, { reach }) => {
    builds += 1;
    return database.select({ date: bookings.date }).from(bookings).where(eq(bookings.businessId, reach));
  });
  const dates = async (reach: ShapedArgument<Placeholder>) =>
    ((await runStatements(db, [datesOf({ reach })]))[0] as { date: string }[]).map((row) => row.date);

  it("builds from placeholders, keyed by the declaration rather than by its name", async () => {
    const seen: unknown[] = [];
    const byBusiness = argumentShape("business", ["business"], (_, { business }) => {
      seen.push(business);
      return business;
    });
    const sameName = argumentShape("business", ["business"], (_, { business }) => business);

    expect(await dates(byBusiness({ business: business.id }))).toEqual(["2026-03-01"]);
    expect(await dates(byBusiness({ business: other.business.id }))).toEqual(["2026-05-02"]);
    expect(builds).toBe(1);
    expect(seen.every((value) => is(value, Placeholder))).toBe(true);
    // Another declaration of the same name is another shape: rendered anew, never served the first one's SQL.
    expect(await dates(sameName({ business: business.id }))).toEqual(["2026-03-01"]);
    expect(builds).toBe(2);
  });

  it("refuses two arguments of one statement that bind one placeholder", async () => {
    const reach = argumentShape("business, again", ["business"], (_, { business }) => business);
    const clashing = statement<{ business: string; reach: ShapedArgument<Placeholder> }>()(
      (database, { business, reach }) =>
        database
          .select({ date: bookings.date })
          .from(bookings)
          .where(eq(bookings.businessId, business ?? reach)),
    );
    await expect(
      runStatements(db, [clashing({ business: business.id, reach: reach({ business: other.business.id }) })]),
    ).rejects.toThrow('Two arguments of one statement bind the placeholder "business".');
  });
});
