import { and, eq, sql } from "drizzle-orm";
import type { bookings, orders } from "../../db/schema";
import { guard } from "../../db/snapshot-guard";
import { statement } from "../../db/statements";

/*
 * The statements of a report of a booking or order (changes.ts), each rendered once per table and isolate
 * (src/db/statements.ts): a report is the write the service takes most often (docs/performance.md).
 */

type SnapshotTable = typeof bookings | typeof orders;

/**
 * A snapshot table's three statements: the stored object; the guard that it is still as read (the same report token,
 * or still absent: `token` undefined); and the object stored, inserted or replaced whole (a booking binds 56
 * parameters, an order fewer).
 */
export function snapshotStatements(table: SnapshotTable) {
  const same = (business: unknown, id: unknown) => sql`${table.businessId} = ${business} and ${table.id} = ${id}`;
  return {
    stored: statement<{ business: string; id: number }>()((db, { business, id }) =>
      db
        .select()
        .from(table)
        .where(and(eq(table.businessId, business), eq(table.id, id))),
    ),
    asRead: statement<{ business: string; id: number; token: string | null | undefined }>()(
      (db, { business, id, token }) =>
        guard(
          db,
          token === undefined
            ? sql`not exists (select 1 from ${table} where ${same(business, id)})`
            : sql`exists (select 1 from ${table} where ${same(business, id)} and ${table.reportToken} is ${token})`,
        ),
    ),
    upsert: statement<Record<string, unknown>>()((db, row) =>
      db
        .insert(table)
        .values(row as never)
        .onConflictDoUpdate({ target: [table.businessId, table.id], set: row as never }),
    ),
  };
}

export type SnapshotStatements = ReturnType<typeof snapshotStatements>;
