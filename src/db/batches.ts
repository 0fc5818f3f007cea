import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteInsertValue, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "./client";

/** D1 binds at most 100 parameters per statement. */
const MAX_PARAMETERS = 100;

/** Multi-row inserts split so that no statement binds more than D1 allows; run them in one `db.batch`. */
export function insertMany<Table extends SQLiteTable>(db: Database, table: Table, rows: SQLiteInsertValue<Table>[]) {
  const perStatement = Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(rows[0] ?? {}).length));
  const statements = [];
  for (let i = 0; i < rows.length; i += perStatement) {
    statements.push(db.insert(table).values(rows.slice(i, i + perStatement)));
  }
  return statements;
}

/** `ids` in chunks that fit in one statement's parameters, for `WHERE id IN (...)` updates. */
export function chunks<T>(items: T[], size = MAX_PARAMETERS - 2): T[][] {
  const result: T[][] = [];
  for (let i = 0; i < items.length; i += size) result.push(items.slice(i, i + size));
  return result;
}

/** Runs any number of statements as one D1 batch (one round trip, one transaction); none runs nothing. */
export async function runBatch(db: Database, statements: BatchItem<"sqlite">[]): Promise<unknown[]> {
  const [first, ...rest] = statements;
  return first ? db.batch([first, ...rest]) : [];
}
