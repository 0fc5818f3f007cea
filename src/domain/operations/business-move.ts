import { and, eq, gt, isNotNull, or, sql } from "drizzle-orm";
import { runBatch } from "../../db/batches";
import {
  apiKeys,
  businesses,
  credentialForwards,
  oauthGrants,
  oauthTokens,
  owners,
  webhookDeliveries,
} from "../../db/schema";
import { isShardName, SANDBOX_SHARD, SHARD_NAMES } from "../../db/shards";
import type { GlobalDependencies } from "../../dependencies";
import { conflict, invalid, notFound } from "../../lib/api-error";
import { iso } from "../../lib/time";
import type { BusinessMoveAnswer } from "../../schemas/runtime";
import { movedTo, movingMarkCleared, shardOfBusiness } from "../access/directory";
import { enqueueMovedIn } from "../webhooks/outbox/sweep";
import { CREDENTIALS } from "./business-rows";
import { copying, deleting, verifying } from "./move-phases";
import {
  enter,
  type Move,
  type MoveStep,
  moveEnded,
  moveRecorded,
  moveUnderWay,
  STEP_STATEMENTS,
  StepBudget,
  startMove,
} from "./move-step";

/*
 * Moving a business between shards (docs/scaling.md, Moving a business between shards), all or nothing, in steps of
 * bounded work that each continue from where the last one got: mark, copy, verify, forward the credentials and
 * switch, then delete what the business left. Until the switch, a move that finds its copy wrong, or that the
 * operator calls off, is undone: the business's copies are deleted from the target and its mark is cleared.
 */

/** The business's credential hashes in a shard: its API keys' and its connections' tokens (access and refresh). */
const credentialHashes = (businessId: string) =>
  sql`select ${apiKeys.keyHash} as credential_hash from ${apiKeys} where ${apiKeys.businessId} = ${businessId}
      union all select ${oauthTokens.tokenHash} from ${oauthTokens} where ${oauthTokens.grantId} in
      (select ${oauthGrants.id} from ${oauthGrants} where ${oauthGrants.businessId} = ${businessId})`;

/** The statements of the switch: the two of the forwards, the owner's email read and the global batch of three. */
const SWITCH_STATEMENTS = 6;

/**
 * The move's switch, in one batch (docs/scaling.md, Moving a business between shards): the old shard forwards every
 * key and token to the new one, which drops its own stale forwards of them; the directory names the new shard and
 * clears its mark; the owner's email is listed for sign-in; the move's record enters its deletion. Every request from
 * then on finds the business in the new shard, and a step failing after it finishes the deletion when run again.
 */
async function switchShard({ deps, move, budget }: MoveStep) {
  const { businessId, fromShard: from, toShard: to } = move;
  const target = deps.onShard(to).db;
  await deps.onShard(from).db.run(
    sql`insert into ${credentialForwards} (credential_hash, shard, created_at)
        select credential_hash, ${to}, ${iso(deps.clock())} from (${credentialHashes(businessId)}) where true
        on conflict (credential_hash) do update set shard = excluded.shard`,
  );
  await target
    .delete(credentialForwards)
    .where(sql`${credentialForwards.credentialHash} in (${credentialHashes(businessId)})`);
  const [owner] = await target.select({ email: owners.email }).from(owners).where(eq(owners.businessId, businessId));
  const { global } = deps;
  enter(move, "deleting");
  await runBatch(global, [...movedTo(global, businessId, to, owner?.email, deps.clock()), moveRecorded(global, move)]);
  budget.spend(SWITCH_STATEMENTS);
}

/** What every answer of the move says: which business, between which shards, in what state, rows copied so far. */
const answerOf = (move: Move, status: BusinessMoveAnswer["status"]): BusinessMoveAnswer => ({
  business_id: move.businessId,
  from: move.fromShard,
  to: move.toShard,
  status,
  rows_copied: move.rowsCopied,
});

/** The move's answer while steps remain (202): where it got, recorded for the next step (one statement). */
async function paused({ deps, move }: MoveStep): Promise<BusinessMoveAnswer> {
  await moveRecorded(deps.global, move);
  return {
    ...answerOf(move, move.phase),
    ...(move.tableName && { table: move.tableName }),
    ...(move.aborted && { reason: move.aborted.message }),
  };
}

/**
 * The undo's end: the business's row in its shard, then its directory row, lose their mark, and the move's record
 * ends. An abort answers its reason as a 409; the operator's undo, 200.
 */
async function undone({ deps, move }: MoveStep): Promise<BusinessMoveAnswer> {
  const { businessId, fromShard: from } = move;
  await deps.onShard(from).db.update(businesses).set({ movingSince: null }).where(eq(businesses.id, businessId));
  const { global } = deps;
  await global.batch([movingMarkCleared(global, businessId), moveEnded(global, businessId)]);
  if (!move.aborted) return answerOf(move, "undone");
  const undoneHere = ` The copy was undone: the business stays in ${from}, where nothing was deleted, and takes writes again.`;
  throw conflict(move.aborted.message + undoneHere, move.aborted.code);
}

/** Runs the move's phases until it ends or the step's budget is spent. */
/**
 * Whether a delivery of the business is being sent by a claim taken before the mark (its lease still runs): the mark
 * holds back the claims after it, not a send already under way, whose attempt would be recorded in the shard the
 * move leaves after its copy, and then sent again from the new one. The copy starts once none is, at most a lease
 * (30 s) after the mark (docs/scaling.md, Moving a business between shards).
 */
async function sendsUnderWay({ deps, move, budget }: MoveStep): Promise<boolean> {
  const now = iso(deps.clock());
  const [leased] = await deps
    .onShard(move.fromShard)
    .db.select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.businessId, move.businessId),
        or(gt(webhookDeliveries.leaseUntil, now), gt(webhookDeliveries.extraAttemptAt, now)),
      ),
    )
    .limit(1);
  budget.spend(1);
  return leased !== undefined;
}

async function advance(step: MoveStep): Promise<BusinessMoveAnswer> {
  const { deps, move, budget } = step;
  for (;;) {
    if (move.phase === "marking") {
      // The business's own row in its shard, which partner and owner requests read with their credential: from here
      // on their writes are refused with 503 too.
      const shard = deps.onShard(move.fromShard).db;
      await shard.update(businesses).set({ movingSince: move.startedAt }).where(eq(businesses.id, move.businessId));
      budget.spend(1);
      enter(move, "copying");
    } else if (move.phase === "copying" && move.rowsCopied === 0 && (await sendsUnderWay(step))) {
      return paused(step);
    } else if (move.phase === "copying" || move.phase === "verifying") {
      const outcome = move.phase === "copying" ? await copying(step) : await verifying(step);
      if (outcome === "paused") return paused(step);
      if (outcome !== "done") enter(move, "undoing", outcome);
      else if (move.phase === "copying") enter(move, "verifying");
      // The switch waits for a step that can also clear the copy's mark, send its deliveries due and delete the
      // credentials in the shard left, a statement each.
      else if (!budget.affords(SWITCH_STATEMENTS + 2 + CREDENTIALS.length)) return paused(step);
      else await switchShard(step);
    } else {
      // The business's copy stays marked until the switch, so that nothing finds it at home there before (a runtime
      // call on a shard its isolate remembers from an earlier stay: src/domain/access/runtime-shard.ts); every step
      // of the deletion clears that mark first, so a step that failed after the switch leaves none behind.
      if (move.phase === "deleting") {
        const target = deps.onShard(move.toShard);
        const [cleared] = await target.db
          .update(businesses)
          .set({ movingSince: null })
          .where(and(eq(businesses.id, move.businessId), isNotNull(businesses.movingSince)))
          .returning({ id: businesses.id });
        budget.spend(1);
        // Taking the business, the shard sends what it owes at once.
        if (cleared) {
          await enqueueMovedIn(target, move.businessId);
          budget.spend(1);
        }
      }
      const leaving = move.phase === "deleting" ? move.fromShard : move.toShard;
      if ((await deleting(step, deps.onShard(leaving).db)) === "paused") return paused(step);
      if (move.phase === "undoing") return undone(step);
      await moveEnded(deps.global, move.businessId);
      return { ...answerOf(move, "moved"), tables: move.tableRows };
    }
  }
}

/** The 409 of a move asked for while another is under way: what finishes it, and, before its switch, what undoes it. */
function underWay(move: Move) {
  const { fromShard: from, toShard: to } = move;
  const started = `A move of this business from ${from} to ${to} is under way (started ${move.startedAt})`;
  return conflict(
    move.phase === "deleting"
      ? `${started}: it is in ${to} now, and { "to": "${to}" } finishes deleting its rows from ${from}.`
      : `${started}: send { "to": "${to}" } to go on with it, or { "to": "${from}" } to undo it.`,
    "move_in_progress",
  );
}

/**
 * One step of moving the business to shard `to` (`POST /internal/v1/businesses/{id}/move`): 404 for an unknown
 * business, 400 for an unknown shard or the one it is in with no move under way. A move under way goes on when asked
 * for the same target, is undone when asked for the shard it leaves (before its switch), and is a 409 otherwise.
 * `statements` is the step's budget (STEP_STATEMENTS).
 */
export async function moveBusiness(
  deps: GlobalDependencies,
  businessId: string,
  to: string,
  statements = STEP_STATEMENTS,
): Promise<BusinessMoveAnswer> {
  if (!isShardName(to)) {
    throw invalid(`There is no shard named ${to}: the shards are ${SHARD_NAMES.join(", ")}.`, "to");
  }
  const budget = new StepBudget(statements);
  const { shard } = await shardOfBusiness(deps.global, businessId);
  if ((shard === SANDBOX_SHARD) !== (to === SANDBOX_SHARD)) {
    throw invalid(
      "Sandbox businesses stay in the sandbox database, and live businesses never enter it: move within each.",
      "to",
    );
  }
  const [business] = await deps
    .onShard(shard)
    .db.select({ id: businesses.id })
    .from(businesses)
    .where(eq(businesses.id, businessId));
  if (!business) throw notFound("No business has that id.");
  const underway = await moveUnderWay(deps.global, businessId);
  budget.spend(3);
  if (!underway) {
    if (to === shard) throw invalid(`The business is already in shard ${to}.`, "to");
    const move = await startMove(deps.global, businessId, shard, to, deps.clock());
    budget.spend(2);
    return advance({ deps, move, budget });
  }
  if (to === underway.fromShard && underway.phase !== "deleting") {
    if (underway.phase !== "undoing") enter(underway, "undoing");
  } else if (to !== underway.toShard) {
    throw underWay(underway);
  }
  return advance({ deps, move: underway, budget });
}
