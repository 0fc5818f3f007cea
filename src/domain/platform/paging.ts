import { and, eq, lt, lte, or, type Placeholder, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type Read, read, readTwo } from "../../db/reads";
import type { bookings, orders } from "../../db/schema";
import type { Bound } from "../../db/statements";
import { invalid } from "../../lib/errors";
import type { ScopeValue } from "../access/scope";

/*
 * Pages of bookings and orders (docs/decisions.md, Paging and sync): newest created first, `(created_at, id)`
 * descending, and a page after `starting_after` holds exactly the rows after that one in this order.
 */

export type SnapshotTable = typeof bookings | typeof orders;

/** One page of a list, and whether another follows. */
export type Page<T> = { data: T[]; hasMore: boolean };

/** What a list of bookings or orders takes besides its own filters. */
export type PageFilters = { limit: number; updatedSince?: string; startingAfter?: number };

/**
 * The rows after the cursor `after` in (created_at desc, id desc): `created_at` before the cursor's, or the same and a
 * lower id. The cursor's `created_at` is a sub-select on its row, restricted to the same business, in the page's own
 * statement (one round trip); written `created_at <= c and (created_at < c or id < after)` so that the index in
 * (business_id, created_at) reads a range ending at the cursor. A cursor that names no row of the business makes the
 * sub-select NULL, and the page empty.
 */
export function afterCursor(db: Database, table: SnapshotTable, business: ScopeValue<string>, after: Placeholder): SQL {
  const cursorAt = db
    .select({ at: table.createdAt })
    .from(table)
    .where(and(eq(table.id, after), eq(table.businessId, business)));
  return and(lte(table.createdAt, cursorAt), or(lt(table.createdAt, cursorAt), lt(table.id, after))) as SQL;
}

/** `limit + 1` rows read in one statement: the page is the first `limit`, and the one more says `has_more`. */
const pageOf = <Row, T>(rows: Row[], limit: number, toObject: (row: Row) => T): Page<T> => ({
  data: rows.slice(0, limit).map(toObject),
  hasMore: rows.length > limit,
});

/**
 * A page of `limit + 1` rows and, with a cursor, the cursor's own row, read in the same batch (one round trip). A
 * cursor of another business, or of none, is a 400 naming the parameter, not an empty page: the page has no place to
 * start, and an empty page would read as "nothing more" (as `GET /events` does, src/domain/webhooks/event-log.ts).
 */
export function readPage<Row, T>(
  record: "booking" | "order",
  limit: number,
  page: Bound<Row[]>,
  cursor: Bound<unknown[]> | undefined,
  toObject: (row: Row) => T,
): Read<Page<T>> {
  if (cursor === undefined) return read(page, (rows) => pageOf(rows, limit, toObject));
  return readTwo(page, cursor, (rows, cursorRows) => {
    if (cursorRows.length === 0) {
      throw invalid(`The query parameter "starting_after" names no ${record} of this business.`, "starting_after");
    }
    return pageOf(rows, limit, toObject);
  });
}
