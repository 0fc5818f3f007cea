import { and, eq, lt, lte, or, type Placeholder, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { invalid } from "../lib/api-error";
import type { ShardDatabase } from "./client";
import { type Read, read, readTwo } from "./reads";
import type { Bound } from "./statements";

/*
 * Pages newest created first, `(created_at, id)` descending, with `starting_after` (docs/decisions.md, Paging and
 * sync): a page after a cursor holds exactly the rows after that one in this order. Events, bookings and orders page
 * this way.
 */

/** One page of a list, and whether another follows. */
export type Page<T> = { data: T[]; hasMore: boolean };

type CreatedTable = SQLiteTable & { id: SQLiteColumn; createdAt: SQLiteColumn };

/**
 * The rows after the cursor `after` in (created_at desc, id desc): `created_at` before the cursor's, or the same and a
 * lower id. The cursor's `created_at` is a sub-select on its row in the page's own statement (one round trip); written
 * `created_at <= c and (created_at < c or id < after)` so that an index ending in created_at reads a range ending at
 * the cursor. Whether the cursor is a row the caller may page from is the cursor's own statement ({@link readPage}).
 */
export function afterRow(db: ShardDatabase, table: CreatedTable, after: Placeholder | string | number): SQL {
  const cursorAt = db.select({ at: table.createdAt }).from(table).where(eq(table.id, after));
  return and(lte(table.createdAt, cursorAt), or(lt(table.createdAt, cursorAt), lt(table.id, after))) as SQL;
}

/** `limit + 1` rows read in one statement: the page is the first `limit`, and the one more says `has_more`. */
const pageOf = <Row, T>(rows: Row[], limit: number, toObject: (row: Row) => T): Page<T> => ({
  data: rows.slice(0, limit).map(toObject),
  hasMore: rows.length > limit,
});

/**
 * A page of `limit + 1` rows and, with a cursor, the cursor's own row as the caller may see it, read in the same batch
 * (one round trip). A cursor the caller may not see is a 400 naming the parameter with `unknownCursor`, not an empty
 * page: the page has no place to start, and an empty page would read as "nothing more".
 */
export function readPage<Row, T>(
  limit: number,
  page: Bound<Row[]>,
  cursor: Bound<unknown[]> | undefined,
  toObject: (row: Row) => T,
  unknownCursor: string,
): Read<Page<T>> {
  if (cursor === undefined) return read(page, (rows) => pageOf(rows, limit, toObject));
  return readTwo(page, cursor, (rows, cursorRows) => {
    if (cursorRows.length === 0) throw invalid(unknownCursor, "starting_after");
    return pageOf(rows, limit, toObject);
  });
}
