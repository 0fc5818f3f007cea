import { type SQL, sql } from "drizzle-orm";

/*
 * Ids of a sandbox business's bookings and orders (docs/decisions.md, Sandbox businesses). A booking's or order's id
 * is the core platform's, unique per business; the core platform never reports a sandbox business's, so the service
 * draws them itself, from a range far above the core platform's own numbers.
 */

/** The first and last id a sandbox's bookings and orders are drawn from. */
export const SANDBOX_IDS = { first: 2 ** 45 + 1, last: 2 ** 46 } as const;

/**
 * The n-th (from 1) new id of `table` in the sandbox range, as the statement computes it when it runs: the range's
 * highest id so far plus n. D1 runs a batch as one transaction, one at a time, so two creations never draw the
 * same ids; a row of one statement reads the maximum before the statement's own rows or after the previous ones, and
 * either way its id is above every earlier one. No parameter is bound: the numbers are the service's own.
 */
export function sandboxRecordId(table: "bookings" | "orders", n: number): SQL {
  const { first, last } = SANDBOX_IDS;
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`Not a row number: ${n}`);
  return sql.raw(
    `((select coalesce(max(id), ${first - 1}) from ${table} where id between ${first} and ${last}) + ${n})`,
  );
}
