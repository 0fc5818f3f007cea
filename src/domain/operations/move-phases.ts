import type { ShardDatabase } from "../../db/client";
import type { MoveAbort } from "../../db/schema";
import { asCopied, deletePage, nameOf, pageOf } from "./business-rows";
import { NO_ROWS, tallied } from "./move-checksum";
import { pageCopy } from "./move-copy";
import { type MoveStep, nextTable, tablesLeft } from "./move-step";

/*
 * The phases of a move that go through the business's tables page by page (docs/scaling.md, Moving a business
 * between shards). Each goes on until its tables are done ("done"), the step's budget is spent ("paused": the next
 * step continues from the table and rowid reached), or it finds the copy wrong (the abort, which undoes it).
 */

type Outcome = "done" | "paused" | MoveAbort;

/** Rows the copy reads and inserts at a time: a page of the widest table fits a step many times over. */
const COPY_PAGE = 100;

/** Rows the verification reads at a time. */
const VERIFY_PAGE = 500;

/** The shards' databases of the move: the one it leaves and the one it goes to. */
function shardsOf({ deps, move }: MoveStep) {
  return { from: deps.onShard(move.fromShard).db, to: deps.onShard(move.toShard).db };
}

/**
 * Copies the business's rows, table by table in foreign-key order and a page at a time, ids kept. A row the target
 * holds under one of their keys that is not the business's own identical copy stops the move before any row that
 * depends on it is copied, and before anything is switched or deleted.
 */
export async function copying(step: MoveStep): Promise<Outcome> {
  const { move, budget } = step;
  const { from, to } = shardsOf(step);
  for (let { tables, index } = tablesLeft(move); index < tables.length; ) {
    const rows = tables[index];
    if (!rows || !budget.affords(1)) return "paused";
    const page = await pageOf(from, rows, move.businessId, move.afterRowid, COPY_PAGE);
    budget.spend(1);
    if (page.length === 0) {
      nextTable(move, ++index);
      continue;
    }
    const copy = pageCopy(
      to,
      rows,
      move.businessId,
      page.map(({ row }) => row),
    );
    if (!budget.affords(copy.statements)) return "paused";
    const { statements, conflicts } = await copy.run();
    budget.spend(statements);
    if (conflicts > 0) {
      return {
        code: "move_conflict",
        message: `The target shard ${move.toShard} already holds rows of ${nameOf(rows)} with the same keys as this business's (${conflicts} of them), which a move does not overwrite.`,
      };
    }
    move.afterRowid = page.at(-1)?.rowid ?? move.afterRowid;
    move.rowsCopied += page.length;
  }
  return "done";
}

/**
 * Compares every table's rows of the business in both shards, by count and checksum (src/domain/operations/
 * move-checksum.ts): the source's rows as the copy stores them, then the target's, each in pages in its own order.
 * Any difference stops the move: its rows changed in one shard or the other while it ran.
 */
export async function verifying(step: MoveStep): Promise<Outcome> {
  const { move, budget } = step;
  const { from, to } = shardsOf(step);
  for (let { tables, index } = tablesLeft(move); index < tables.length; ) {
    const rows = tables[index];
    if (!rows || !budget.affords(1)) return "paused";
    const { source, ...read }: NonNullable<typeof move.tally> = move.tally ?? NO_ROWS;
    const page = await pageOf(source ? to : from, rows, move.businessId, move.afterRowid, VERIFY_PAGE);
    budget.spend(1);
    const last = page.at(-1);
    if (last) {
      const stored = page.map(({ row }) => (source ? row : asCopied(rows, row)));
      move.tally = { ...tallied(read, stored), ...(source && { source }) };
      move.afterRowid = last.rowid;
    } else if (!source) {
      move.tally = { ...NO_ROWS, source: read };
      move.afterRowid = 0;
    } else if (read.rows !== source.rows || read.checksum !== source.checksum) {
      const content = read.rows === source.rows ? ", with other content" : "";
      return {
        code: "move_mismatch",
        message: `The copy of ${nameOf(rows)} in ${move.toShard} differs from the business's rows in ${move.fromShard} (${read.rows} rows and ${source.rows}${content}): rows changed in one shard or the other while the move ran.`,
      };
    } else {
      move.tableRows = { ...move.tableRows, [nameOf(rows)]: read.rows };
      nextTable(move, ++index);
    }
  }
  return "done";
}

/**
 * Deletes the business's rows from `db`, children first, a statement of up to 500 rows at a time: from the shard it
 * left once switched, or from the target when the copy is undone (only the business's own rows; a client's copy,
 * which other businesses may share, stays).
 */
export async function deleting(step: MoveStep, db: ShardDatabase): Promise<Outcome> {
  const { move, budget } = step;
  for (let { tables, index } = tablesLeft(move); index < tables.length; ) {
    const rows = tables[index];
    if (!rows || !budget.affords(1)) return "paused";
    const emptied = await deletePage(db, rows, move.businessId);
    budget.spend(1);
    if (emptied) nextTable(move, ++index);
  }
  return "done";
}
