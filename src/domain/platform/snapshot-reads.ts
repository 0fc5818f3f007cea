import { and, desc, eq, gte } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { afterRow, type Page, readPage } from "../../db/pages";
import { type Read, read } from "../../db/reads";
import type { bookings, orders } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import { notFound } from "../../lib/api-error";
import { businessOf, type Reach, reachArgument, type SqlReach } from "../access/scope";

/** What a list of bookings or orders takes (docs/decisions.md, Paging and sync); `since` only where a date is given. */
export type PageFilters<Status extends string> = {
  limit: number;
  status?: Status;
  since?: string;
  updatedSince?: string;
  startingAfter?: number;
};

type SnapshotTable = typeof bookings | typeof orders;

type PageArguments = { reach: ShapedArgument<SqlReach>; limit: number; status?: string; since?: string };

/**
 * The reads of the stored bookings or orders, one rule for both (docs/decisions.md, Paging and sync): a page of
 * `limit + 1` rows of the reach's business, newest created first (`created_at`, then `id`), optionally of one status,
 * on or after `since` by the `dated` column, with `updated_at` at or after `updatedSince`, after the cursor
 * (src/db/pages.ts); and one object by its id. A cursor or an id of another business is one of no object: the cursor
 * a 400, the id a 404 (docs/architecture.md, Everywhere).
 */
export function snapshotReads<Table extends SnapshotTable, T>(
  table: Table,
  record: "booking" | "order",
  toObject: (row: Table["$inferSelect"]) => T,
  dated?: SQLiteColumn,
) {
  const page = statement<PageArguments & { updatedSince?: string; after?: number }>()(
    (db, { reach, limit, status, since, updatedSince, after }) =>
      db
        .select()
        .from(table as SnapshotTable)
        .where(
          and(
            eq(table.businessId, businessOf(reach)),
            status === undefined ? undefined : eq(table.status, status),
            since === undefined || dated === undefined ? undefined : gte(dated, since),
            updatedSince === undefined ? undefined : gte(table.updatedAt, updatedSince),
            after === undefined ? undefined : afterRow(db, table, after),
          ),
        )
        .orderBy(desc(table.createdAt), desc(table.id))
        .limit(limit),
  );
  const byId = statement<{ reach: ShapedArgument<SqlReach>; id: number }>()((db, { reach, id }) =>
    db
      .select()
      .from(table as SnapshotTable)
      .where(and(eq(table.id, id), eq(table.businessId, businessOf(reach)))),
  );
  const objectNotFound = () => notFound(`No ${record} with that id exists for this credential.`);
  return {
    objectNotFound,
    list(reach: Reach, { limit, status, since, updatedSince, startingAfter }: PageFilters<string>): Read<Page<T>> {
      const scope = reachArgument(reach);
      const rows = page({ reach: scope, limit: limit + 1, status, since, updatedSince, after: startingAfter });
      const cursor = startingAfter === undefined ? undefined : byId({ reach: scope, id: startingAfter });
      const unknownCursor = `The query parameter "starting_after" names no ${record} of this business.`;
      return readPage(limit, rows, cursor, toObject, unknownCursor);
    },
    get(reach: Reach, id: number): Read<T> {
      return read(byId({ reach: reachArgument(reach), id }), ([row]) => {
        if (!row) throw objectNotFound();
        return toObject(row);
      });
    },
  };
}
