import { and, eq, getTableColumns, or } from "drizzle-orm";
import { getTableConfig, type SQLiteColumn, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { runBatch, statementsThatFit } from "../../db/batches";
import type { ShardDatabase } from "../../db/client";
import { asCopied, type BusinessRows } from "./business-rows";
import { canonicalJson } from "./move-checksum";

type Row = Record<string, unknown>;

/** The columns of a table's primary key, by property name: what names a row in either shard. */
function keyColumns(table: SQLiteTable): [string, SQLiteColumn][] {
  const [composite] = getTableConfig(table).primaryKeys;
  const names = composite?.columns.map((column) => column.name);
  return Object.entries(getTableColumns(table)).filter(([, column]) =>
    names ? names.includes(column.name) : column.primary,
  );
}

const keyOf = (key: [string, SQLiteColumn][], row: Row) => JSON.stringify(key.map(([property]) => row[property]));

/**
 * Copying a page of the business's rows of one table to the shard it goes to (docs/scaling.md, Moving a business
 * between shards): inserts that keep every row's ids, each within D1's bound parameters (src/db/batches.ts), in one
 * batch. A row the target already holds under the same key, or under another unique value, is not inserted; it is
 * looked up by its key and is fine only if it is the business's own copy, identical (a step run again after a
 * failure). Anything else there is a conflict: another business's row, or other content.
 */
export function pageCopy(to: ShardDatabase, rows: BusinessRows, businessId: string, page: Row[]) {
  const { table } = rows;
  const key = keyColumns(table);
  const values = page.map((row) => asCopied(rows, row));
  const inserts = statementsThatFit(values, (slice) =>
    to
      .insert(table)
      .values(slice as never)
      .onConflictDoNothing()
      .returning(Object.fromEntries(key)),
  );
  // A shared row (a client's copy) may be another business's as well as this one's: it is looked for by its key alone.
  const held = (slice: Row[]) =>
    statementsThatFit(slice, (part) =>
      to
        .select()
        .from(table)
        .where(
          and(
            rows.shared ? undefined : rows.of(businessId),
            or(...part.map((row) => and(...key.map(([property, column]) => eq(column, row[property]))))),
          ),
        ),
    );
  return {
    /** The statements it runs at most: the inserts, and the look-ups if no row could be inserted. */
    statements: inserts.length + held(values).length,
    /** Runs it: answers the statements it ran, and how many rows conflict with what the target holds. */
    async run(): Promise<{ statements: number; conflicts: number }> {
      const inserted = new Set(((await runBatch(to, inserts)) as Row[][]).flat().map((row) => keyOf(key, row)));
      const skipped = values.filter((row) => !inserted.has(keyOf(key, row)));
      if (skipped.length === 0) return { statements: inserts.length, conflicts: 0 };
      const lookups = held(skipped);
      const found = ((await runBatch(to, lookups)) as Row[][]).flat();
      const copies = new Map(found.map((row) => [keyOf(key, row), canonicalJson(row)]));
      const conflicts = skipped.filter((row) => copies.get(keyOf(key, row)) !== canonicalJson(row)).length;
      return { statements: inserts.length + lookups.length, conflicts };
    },
  };
}
