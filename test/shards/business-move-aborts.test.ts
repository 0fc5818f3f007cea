import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { bookings, businesses, idempotencyKeys, webhookEndpoints } from "../../src/db/schema";
import { moveBusiness } from "../../src/domain/operations/business-move";
import { registerAction } from "../helpers/actions";
import {
  businessWithBookings,
  directoryRowOf,
  expectNoRowsIn,
  move,
  populatedLegacyBusiness,
  rowsIn,
} from "../helpers/business-move";
import { deps } from "../helpers/dependencies";
import { createBusiness, legacyDb, shardDb } from "../helpers/fixtures";
import { expectError } from "../helpers/http";

// A move is all or nothing (docs/scaling.md, Moving a business between shards): a conflict with what the target
// holds, or a copy that differs from the business's rows, stops it before its switch and undoes the copy.

const UNDONE = "The copy was undone: the business stays in legacy, where nothing was deleted, and takes writes again.";

type Shop = Awaited<ReturnType<typeof populatedLegacyBusiness>>;

/** Another business of eu1, which holds a row with the same key as one of the shop's. */
async function otherBusinessHolding(shop: Shop, table: typeof webhookEndpoints | typeof idempotencyKeys) {
  const { business: other } = await createBusiness({ shard: "eu1" });
  const [row] = await legacyDb.select().from(table).where(eq(table.businessId, shop.business.id));
  if (!row) throw new Error(`The shop has no row of ${table}.`);
  await shardDb("eu1")
    .insert(table)
    .values({ ...row, businessId: other.id });
  return other.id;
}

const CONFLICTS = [
  { table: "webhook_endpoints", hold: (shop: Shop) => otherBusinessHolding(shop, webhookEndpoints) },
  { table: "idempotency_keys", hold: (shop: Shop) => otherBusinessHolding(shop, idempotencyKeys) },
  {
    // Bookings are keyed by business and id: what holds the key is a row of the business that is not its copy. The
    // business's own row there is its copy, marked as the move's first step marks it (a step of 6 statements stops
    // before copying anything).
    table: "bookings",
    hold: async (shop: Shop) => {
      expect(await moveBusiness(deps, shop.business.id, "eu1", 6)).toMatchObject({ status: "copying", rows_copied: 0 });
      const [business] = await legacyDb.select().from(businesses).where(eq(businesses.id, shop.business.id));
      const [booking] = await legacyDb
        .select()
        .from(bookings)
        .where(eq(bookings.businessId, shop.business.id))
        .limit(1);
      if (!business || !booking) throw new Error("The shop has no booking.");
      const eu1 = shardDb("eu1");
      await eu1.batch([
        eu1.insert(businesses).values(business),
        eu1.insert(bookings).values({ ...booking, status: "cancelled" }),
      ]);
      return undefined;
    },
  },
];

describe.each(CONFLICTS)(
  "a move to a shard that holds rows of $table with the business's keys",
  async ({ table, hold }) => {
    const shop = await populatedLegacyBusiness();
    const { business, apiKey } = shop;
    const before = await rowsIn("legacy", business.id);
    const other = await hold(shop);
    const otherRows = other && (await rowsIn("eu1", other))[table];
    const answer = await move(business.id, "eu1");

    it("stops with a 409 naming the table, and says the copy was undone", async () => {
      await expectError(
        answer,
        409,
        `The target shard eu1 already holds rows of ${table} with the same keys as this business's (1 of them), which a move does not overwrite. ${UNDONE}`,
        { code: "move_conflict", param: undefined },
      );
    });

    it("switches nothing and deletes nothing in the shard the business is in", async () => {
      expect(await directoryRowOf(business.id)).toMatchObject({ shard: "legacy", movingSince: null });
      expect(await rowsIn("legacy", business.id)).toEqual(before);
    });

    it("deletes the business's copies from the target, and nothing of the business that held the key", async () => {
      await expectNoRowsIn("eu1", business.id);
      if (other) expect((await rowsIn("eu1", other))[table]).toEqual(otherRows);
    });

    it("leaves the business taking writes in its shard, as before the move", async () => {
      const action = await registerAction(apiKey, "after_the_abort");
      const [row] = await legacyDb.select().from(businesses).where(eq(businesses.id, business.id));
      expect(row?.movingSince).toBeNull();
      expect((await rowsIn("legacy", business.id)).actions?.map((found) => (found as { id: number }).id)).toContain(
        action.id,
      );
    });
  },
);

describe("a move whose copy changes in the target between two of its steps", async () => {
  const { business } = await businessWithBookings(1_000);
  const before = await rowsIn("legacy", business.id);
  const first = await move(business.id, "eu1");
  // A booking the first step copied, changed in the target before the verification reads it.
  const [copied] = await shardDb("eu1").select().from(bookings).where(eq(bookings.businessId, business.id)).limit(1);
  await shardDb("eu1")
    .update(bookings)
    .set({ notes: "changed in the target" })
    .where(and(eq(bookings.businessId, business.id), eq(bookings.id, copied?.id ?? 0)));
  let last = await move(business.id, "eu1");
  for (let step = 0; last.status === 202 && step < 20; step++) last = await move(business.id, "eu1");

  it("stops at its verification with a 409 naming the table whose checksum differs, and undoes the copy", async () => {
    await expect(first).toHaveStatus(202);
    await expectError(
      last,
      409,
      `The copy of bookings in eu1 differs from the business's rows in legacy (1000 rows and 1000, with other content): rows changed in one shard or the other while the move ran. ${UNDONE}`,
      { code: "move_mismatch" },
    );
    expect(await directoryRowOf(business.id)).toMatchObject({ shard: "legacy", movingSince: null });
    expect(await rowsIn("legacy", business.id)).toEqual(before);
    await expectNoRowsIn("eu1", business.id);
  });
});
