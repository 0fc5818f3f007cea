import type { BatchItem } from "drizzle-orm/batch";
import type { SQLiteInsertValue, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { Database } from "./client";

/** D1 binds at most 100 parameters per statement ("too many SQL variables" past that). */
export const MAX_BOUND_PARAMETERS = 100;

/** Anything drizzle can render: a query builder whose `toSQL().params` are exactly what D1 will bind. */
type Renderable = { toSQL(): { params: unknown[] } };

/**
 * The statements that cover `items`, each built by `build` over a slice and split until it binds at most
 * MAX_BOUND_PARAMETERS. The count is what drizzle actually binds (`toSQL().params.length`), never an estimate from
 * object keys: drizzle also binds the default of every column a row leaves out, so a row binds more values than it
 * has keys, and an estimate would let a large write past D1's limit (docs/reliability.md, Statements that always fit
 * D1). Run the result in one `runBatch` to keep it atomic.
 */
export function statementsThatFit<Item, Statement extends Renderable>(
  items: readonly Item[],
  build: (slice: Item[]) => Statement,
): Statement[] {
  if (items.length === 0) return [];
  const statement = build([...items]);
  const bound = statement.toSQL().params.length;
  if (bound <= MAX_BOUND_PARAMETERS) return [statement];
  if (items.length === 1) {
    throw new RangeError(`One item binds ${bound} parameters; D1 binds at most ${MAX_BOUND_PARAMETERS}.`);
  }
  const pieces = Math.min(items.length, Math.ceil(bound / MAX_BOUND_PARAMETERS));
  const size = Math.ceil(items.length / pieces);
  const statements: Statement[] = [];
  for (let i = 0; i < items.length; i += size) {
    statements.push(...statementsThatFit(items.slice(i, i + size), build));
  }
  return statements;
}

/** A multi-row insert of `rows`, as statements that each fit D1's parameter limit. */
export function insertMany<Table extends SQLiteTable>(db: Database, table: Table, rows: SQLiteInsertValue<Table>[]) {
  return statementsThatFit(rows, (slice) => db.insert(table).values(slice));
}

/** Runs any number of statements as one D1 batch (one round trip, one transaction); none runs nothing. */
export async function runBatch(db: Database, statements: BatchItem<"sqlite">[]): Promise<unknown[]> {
  const [first, ...rest] = statements;
  return first ? db.batch([first, ...rest]) : [];
}
