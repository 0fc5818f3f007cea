import { eq, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { businesses, businessShards } from "../../src/db/schema";
import { SHARD_NAMES, type ShardName } from "../../src/db/shards";
import { globalDb, shardDb } from "./fixtures";

/** The regional shards the files of test/shards/ place their businesses in, one business in each. */
export const REGIONS = ["eu1", "us1"] as const satisfies ShardName[];

/** The shards whose database holds a row of `table` that `where` selects: a business's rows are in its shard only. */
export async function shardsHolding(table: SQLiteTable, where: SQL | undefined): Promise<ShardName[]> {
  const found = await Promise.all(
    SHARD_NAMES.map(async (shard) => {
      const rows = await shardDb(shard).select({ found: sql`1` }).from(table).where(where).limit(1);
      return rows.length > 0 ? [shard] : [];
    }),
  );
  return found.flat();
}

/**
 * A shard's database whose D1 batches fail after the first `succeeding` (as in an outage of that database alone);
 * its other calls reach the real one.
 */
export function failingBatches(real: D1Database, succeeding = 0): D1Database {
  let batches = 0;
  return new Proxy(real, {
    get(target, key) {
      if (key === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          if (batches++ < succeeding) return target.batch(statements);
          throw new Error("injected fault: the shard's database is unavailable");
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/**
 * The directory marks the business as being moved, or no longer (docs/scaling.md, Moving a business between shards),
 * and its own row in its shard, as a move does: requests with a credential or a session, and runtime calls on a shard
 * they remember, read that one.
 */
export async function setMoving(businessId: string, moving: boolean) {
  const movingSince = moving ? new Date().toISOString() : null;
  const [entry] = await globalDb
    .update(businessShards)
    .set({ movingSince })
    .where(eq(businessShards.businessId, businessId))
    .returning({ shard: businessShards.shard });
  const shard = entry?.shard as ShardName;
  await shardDb(shard).update(businesses).set({ movingSince }).where(eq(businesses.id, businessId));
}
