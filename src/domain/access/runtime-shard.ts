import { eq } from "drizzle-orm";
import { businesses } from "../../db/schema";
import type { ShardName } from "../../db/shards";
import type { Dependencies, GlobalDependencies } from "../../dependencies";
import { ApiError, notFound } from "../../lib/api-error";
import { businessMoving } from "./business-moving";
import { shardOfBusiness } from "./directory";

/** A runtime call only reads the business (its context), or writes it (a report, an action call, a plan change). */
export type RuntimeAccess = "read" | "write";

const UNKNOWN_BUSINESS = "No business has that id.";

/**
 * A runtime call found its business's row absent from the shard it ran on (404), or marked by a move (503 with
 * `Retry-After`): thrown before the call writes anything. On a shard the directory named, that is the answer; on
 * one this isolate remembered, the shard may not be the business's home now, and the call runs again where the
 * directory says (`onRuntimeShard`).
 */
export class NotPlacedHere extends ApiError {
  constructor(readonly marked: boolean) {
    const refusal = marked ? businessMoving() : notFound(UNKNOWN_BUSINESS);
    super(refusal.code, refusal.message, refusal.options);
  }
}

/**
 * The business's row as a runtime call read it in its shard, checked: present and unmarked, or marked where the call
 * may read a moving business (`readsMarked`: the directory has just named this shard).
 */
export function placedHere<T extends { movingSince: string | null }>(row: T | undefined, readsMarked = false): T {
  if (!row) throw new NotPlacedHere(false);
  if (row.movingSince !== null && !readsMarked) throw new NotPlacedHere(true);
  return row;
}

/**
 * The check of a runtime call whose first round trip reads nothing else (an intake's turn, kept in its conversation's
 * object): the business's row alone, one indexed read.
 */
export async function assertPlacedHere(deps: Dependencies, businessId: string, readsMarked: boolean): Promise<void> {
  const { db } = deps;
  const [row] = await db
    .select({ movingSince: businesses.movingSince })
    .from(businesses)
    .where(eq(businesses.id, businessId));
  placedHere(row, readsMarked);
}

/**
 * The shard each business was last found in by a runtime call of this isolate. A move cannot make an entry wrong
 * unnoticed: the shard a business leaves holds its row marked from the move's start until the row is deleted, and
 * the shard it goes to holds its copy marked until the switch, so a call on a stale entry finds the row absent or
 * marked and reads the directory (docs/scaling.md, How a request finds its shard). Bounded, oldest entry out first.
 */
const knownShards = new Map<string, ShardName>();
const KNOWN_SHARDS_MAX = 10_000;

function remember(businessId: string, shard: ShardName) {
  knownShards.delete(businessId);
  knownShards.set(businessId, shard);
  if (knownShards.size > KNOWN_SHARDS_MAX) knownShards.delete(knownShards.keys().next().value as string);
}

/**
 * Runs a runtime call for `businessId` on its shard: this isolate's last finding, checked by `placedHere` in the
 * call's first round trip; when the row says the business lives elsewhere, the directory is read once and the call
 * runs again there. A sandbox business is a 404 here (docs/decisions.md, Sandbox businesses); a write to a business
 * being moved a 503 with `Retry-After` (docs/scaling.md, Moving a business between shards).
 */
export async function onRuntimeShard<T>(
  deps: GlobalDependencies,
  businessId: string,
  access: RuntimeAccess,
  run: (deps: Dependencies, readsMarked: boolean) => Promise<T>,
): Promise<T> {
  const known = knownShards.get(businessId);
  if (known !== undefined) {
    try {
      return await run(deps.onShard(known), false);
    } catch (error) {
      if (!(error instanceof NotPlacedHere)) throw error;
      knownShards.delete(businessId);
    }
  }
  const { shard, moving, sandbox } = await shardOfBusiness(deps.global, businessId);
  if (sandbox) throw notFound(UNKNOWN_BUSINESS);
  if (moving && access === "write") throw businessMoving();
  const answer = await run(deps.onShard(shard), access === "read");
  if (!moving) remember(businessId, shard);
  return answer;
}
