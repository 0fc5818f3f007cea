import { type SQL, sql } from "drizzle-orm";
import { ID_RANGE_SIZE, SHARDS, type ShardName } from "../../db/shards";

/*
 * Ids of a sandbox business's bookings and orders (docs/decisions.md, Sandbox businesses). A booking's or order's id
 * is the core platform's, unique per table in a shard; the core platform never reports a sandbox business's, so the
 * service draws them itself, from the upper half of its shard's id range (src/db/shards.ts, 2^39 ids per table): far
 * above the core platform's own numbers, apart from every other shard's, so a sandbox business could even move.
 */

/** The first and last id of the shard's sandbox range: the upper half of its range. */
export function sandboxIdRange(shard: ShardName): { first: number; last: number } {
  const start = SHARDS[shard].idRange * ID_RANGE_SIZE;
  return { first: start + ID_RANGE_SIZE / 2 + 1, last: start + ID_RANGE_SIZE };
}

/**
 * The n-th (from 1) new id of `table` in the shard's sandbox range, as the statement computes it when it runs: the
 * range's highest id so far plus n. D1 runs a batch as one transaction, one at a time, so two creations never draw the
 * same ids; a row of one statement reads the maximum before the statement's own rows or after the previous ones, and
 * either way its id is above every earlier one. No parameter is bound: the numbers are the service's own.
 */
export function sandboxRecordId(table: "bookings" | "orders", shard: ShardName, n: number): SQL {
  const { first, last } = sandboxIdRange(shard);
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`Not a row number: ${n}`);
  return sql.raw(
    `((select coalesce(max(id), ${first - 1}) from ${table} where id between ${first} and ${last}) + ${n})`,
  );
}
