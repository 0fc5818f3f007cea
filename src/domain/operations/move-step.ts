import { eq } from "drizzle-orm";
import type { GlobalDatabase } from "../../db/client";
import { businessMoves, type MoveAbort, type MovePhase } from "../../db/schema";
import type { ShardName } from "../../db/shards";
import type { GlobalDependencies } from "../../dependencies";
import { type EpochMs, iso } from "../../lib/time";
import { markedMoving } from "../access/directory";
import { BUSINESS_ROWS, DELETION_ORDER, nameOf } from "./business-rows";

/*
 * One step of a move (docs/scaling.md, Moving a business between shards): a bounded amount of work on the move's
 * record in the global database (`business_moves`), which the next step continues from.
 */

/**
 * The D1 statements one step runs at most, each counted whether it runs alone or in a batch: D1 allows a Worker
 * invocation 1,000 queries, and a step stays far below it however D1 counts a batch.
 */
export const STEP_STATEMENTS = 200;

/** Statements kept for the step's end: recording how far it got, or ending the move (at most 3). */
const KEPT_FOR_THE_END = 3;

/** The statements a step has left; `statements` is STEP_STATEMENTS but in tests that stop a move at a given point. */
export class StepBudget {
  private spent = 0;

  constructor(private readonly statements: number) {}

  /** Whether `count` statements more leave what the step's end needs. */
  affords(count: number): boolean {
    return this.spent + count + KEPT_FOR_THE_END <= this.statements;
  }

  spend(count: number): void {
    this.spent += count;
  }
}

export type Move = typeof businessMoves.$inferSelect;

/** A step: the move as far as it got, what it works with, and what it may still run. */
export type MoveStep = { deps: GlobalDependencies; move: Move; budget: StepBudget };

/** A phase's tables, in the order it goes through them. */
const TABLES_OF: Record<MovePhase, typeof BUSINESS_ROWS> = {
  marking: BUSINESS_ROWS,
  copying: BUSINESS_ROWS,
  verifying: BUSINESS_ROWS,
  deleting: DELETION_ORDER,
  undoing: DELETION_ORDER,
};

/** The tables the move's phase goes through, and the place of the one it has reached (their number once all are done). */
export function tablesLeft(move: Move) {
  const tables = TABLES_OF[move.phase];
  if (move.tableName === "") return { tables, index: tables.length };
  const index = tables.findIndex((rows) => nameOf(rows) === move.tableName);
  if (index < 0) throw new Error(`A move of ${move.businessId} has reached an unknown table, ${move.tableName}.`);
  return { tables, index };
}

/** The move's next table of its phase, from its start; "" once every table is done. */
export function nextTable(move: Move, index: number): void {
  move.tableName = nameOf(TABLES_OF[move.phase][index]);
  move.afterRowid = 0;
  move.tally = null;
}

/** The move enters `phase`, at its first table; an abort's reason is kept for the answers of the undo. */
export function enter(move: Move, phase: MovePhase, aborted?: MoveAbort): void {
  move.phase = phase;
  if (aborted) move.aborted = aborted;
  nextTable(move, 0);
}

/** The business's move under way, if any (one statement). */
export async function moveUnderWay(global: GlobalDatabase, businessId: string): Promise<Move | undefined> {
  const [move] = await global.select().from(businessMoves).where(eq(businessMoves.businessId, businessId));
  return move;
}

/**
 * Starts a move: its record, and the mark on the business's directory row (a legacy business gets its row, naming
 * legacy), in one batch of two statements. From here on the runtime API refuses the business's writes; its own row in
 * its shard is marked by the first phase.
 */
export async function startMove(
  global: GlobalDatabase,
  businessId: string,
  from: ShardName,
  to: ShardName,
  at: EpochMs,
): Promise<Move> {
  const now = iso(at);
  const move: Move = {
    businessId,
    fromShard: from,
    toShard: to,
    phase: "marking",
    tableName: nameOf(BUSINESS_ROWS[0]),
    afterRowid: 0,
    rowsCopied: 0,
    tally: null,
    tableRows: {},
    aborted: null,
    startedAt: now,
  };
  await global.batch([markedMoving(global, businessId, from, now), global.insert(businessMoves).values(move)]);
  return move;
}

/** The statement that records how far the move got. */
export const moveRecorded = (global: GlobalDatabase, { businessId, ...progress }: Move) =>
  global.update(businessMoves).set(progress).where(eq(businessMoves.businessId, businessId));

/** The statement that ends the move's record. */
export const moveEnded = (global: GlobalDatabase, businessId: string) =>
  global.delete(businessMoves).where(eq(businessMoves.businessId, businessId));
