import { and, eq, gt, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "./client";

type BusinessTable = SQLiteTable & { businessId: SQLiteColumn };

/** How many rows of `table` the business has (those `where` keeps, when given): the usual count behind a limit. */
export const rowsOfBusiness = (table: BusinessTable, businessId: string, where?: SQL): SQL =>
  sql`(select count(*) from ${table} where ${table.businessId} = ${businessId}${where ? sql` and ${where}` : sql``})`;

/**
 * Inserts a row unless the business is at its limit (docs/architecture.md, Principals and owner sides): the insert,
 * and a delete of that row when the count went over, are one D1 batch, one transaction, so however many creates race,
 * at most `limit` rows survive. `used` is what counts (the business's rows of the table by default). Answers the
 * stored row, or undefined at the limit; a unique-key conflict rejects as usual.
 */
export async function insertWithinLimit<Table extends SQLiteTable>(
  db: Database,
  table: Table,
  values: Table["$inferInsert"],
  limit: number,
  used: SQL = rowsOfBusiness(table as unknown as BusinessTable, (values as { businessId: string }).businessId),
): Promise<Table["$inferSelect"] | undefined> {
  const [inserted, removed] = await db.batch([
    db.insert(table).values(values).returning(),
    db
      .delete(table)
      .where(and(eq(sql`rowid`, sql`last_insert_rowid()`), gt(used, limit)))
      .returning({ removed: sql<number>`1` }),
  ]);
  if (removed.length > 0) return undefined;
  return (inserted as Table["$inferSelect"][])[0];
}
