import { fillPlaceholders } from "drizzle-orm";
import { shardDatabase } from "../../src/db/client";
import type { Bound } from "../../src/db/statements";
import { shardD1 } from "./fixtures";

/**
 * A statement of a read (src/db/statements.ts) run on its own, as D1 answers it: its rows and D1's count of the rows
 * it read (`meta.rows_read`), with the SQL and values the app binds.
 */
export async function runAlone(statement: Bound<unknown> | undefined) {
  if (!statement) throw new Error("No such statement in the read.");
  const { sql, params } = statement.prepared(shardDatabase(shardD1)).query;
  const result = await shardD1
    .prepare(sql)
    .bind(...fillPlaceholders(params, statement.values))
    .all();
  return { rows: result.results.length, rowsRead: result.meta.rows_read };
}
