import { type SQL, sql } from "drizzle-orm";
import { SHARDS, type ShardName } from "./shards";

/*
 * Row ids that never collide across shards (docs/scaling.md, Ids unique across shards): a row keeps its id when its
 * business moves, where AUTOINCREMENT would number after another shard's ids. Each shard numbers its rows from its
 * `id_sequences` (migrations/0018_ids_per_shard.sql), for the k-th row of a statement:
 *   id = max(the table's next id, (milliseconds since ID_EPOCH) × 4096 + the shard's slot) + 16 × k
 */

/** Ids of one shard differ from another's modulo this: at most 16 shards (src/db/shards.ts, `idSlot`). */
export const ID_SLOTS = 16;

/** The ids' time origin, 2026-01-01 UTC: 2^53 / 4096 milliseconds after it is the year 2095. */
const ID_EPOCH_MS = Date.UTC(2026, 0, 1);

/** Rows of a statement so far, per table, until the current task ends (when the statement has been built). */
const rowsBuilt = new Map<string, number>();

/** The next id of `table` in the shard's sequence, as SQL (evaluated once per statement). */
function sequenceNext(table: string): string {
  const now = `cast((julianday('now') - 2440587.5) * 86400000 as integer)`;
  return `(select max(next, (${now} - ${ID_EPOCH_MS}) * 4096 + next % ${ID_SLOTS}) from id_sequences where name = '${table}')`;
}

/**
 * The id of a new row of `table`, as SQL its insert computes: drizzle builds a statement's rows one after another in
 * one synchronous task, and each gets the next offset, so the rows of one statement never share an id (the sequence's
 * subquery is evaluated once per statement). Binds no parameter.
 */
export function nextId(table: string): SQL {
  const row = rowsBuilt.get(table) ?? 0;
  if (row === 0) queueMicrotask(() => rowsBuilt.delete(table));
  rowsBuilt.set(table, row + 1);
  return sql.raw(`(${sequenceNext(table)} + ${row * ID_SLOTS})`);
}

/**
 * The ids of the rows an `INSERT ... SELECT` into `table` makes, numbered from the shard's sequence as `nextId`
 * numbers a statement's rows, one slot step apart by the rows' order: such an insert sets no column's default, and
 * AUTOINCREMENT must never number a row (see above).
 */
export const selectedRowsIds = (table: string): SQL =>
  sql.raw(`(${sequenceNext(table)} + ${ID_SLOTS} * (row_number() over () - 1))`);

/**
 * The statement that puts a shard's sequences in its slot, run after its migrations (scripts/migrate.ts,
 * test/setup.ts): a sequence not yet in the slot moves into it; run again, it changes nothing. None for slot 0, where
 * the migration starts every sequence (and a database migrated only up to before it has no sequences at all).
 */
export function idSlotStatements(shard: ShardName): string[] {
  const slot = SHARDS[shard].idSlot;
  if (slot === 0) return [];
  return [
    `UPDATE id_sequences SET next = next - (next % ${ID_SLOTS}) + ${ID_SLOTS} + ${slot} WHERE next % ${ID_SLOTS} <> ${slot}`,
  ];
}
