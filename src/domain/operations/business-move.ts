import { and, eq, isNotNull, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import {
  apiKeys,
  businesses,
  businessShards,
  credentialForwards,
  oauthGrants,
  oauthTokens,
  ownerEmails,
  owners,
} from "../../db/schema";
import { isShardName, SHARD_NAMES, type ShardName } from "../../db/shards";
import type { Dependencies } from "../../dependencies";
import { invalid, notFound } from "../../lib/errors";
import { isoNow } from "../../lib/time";
import { shardOfBusiness } from "../access/directory";
import { BUSINESS_ROWS, copyRows, DELETION_ORDER, deleteRows } from "./business-rows";

/*
 * Moving a business between shards (docs/scaling.md, Moving a business between shards), in steps that can each be
 * run again: mark, copy, forward the credentials, switch, delete. A failure before the switch leaves the mark, so
 * writes stay refused and nothing is lost: the move run again copies what is missing. A failure after it leaves the
 * old shard's rows marked, and the move run again to the same shard deletes them.
 */

export type MoveOutcome = { business_id: string; from: ShardName; to: ShardName; rows_copied: number };

/**
 * Marks the business as moving, in the directory (a legacy business gets its row, naming legacy) and on its own row
 * in its shard, which partner and owner requests read with their credential: from here on, writes are refused with
 * 503. An earlier run's mark is kept.
 */
export async function markMoving(deps: Dependencies, businessId: string, from: ShardName): Promise<void> {
  const now = isoNow();
  await deps.global
    .insert(businessShards)
    .values({ businessId, shard: from, movingSince: now, createdAt: now })
    .onConflictDoUpdate({
      target: businessShards.businessId,
      set: { movingSince: sql`coalesce(${businessShards.movingSince}, excluded.moving_since)` },
    });
  await deps.onShard(from).db.update(businesses).set({ movingSince: now }).where(eq(businesses.id, businessId));
}

/** Copies every row of the business from `from` to `to`, ids kept, table by table in foreign-key order. */
export async function copyBusiness(deps: Dependencies, businessId: string, from: ShardName, to: ShardName) {
  let copied = 0;
  for (const rows of BUSINESS_ROWS) {
    copied += await copyRows(deps.onShard(from).db, deps.onShard(to).db, rows, businessId);
  }
  return copied;
}

/** The business's credential hashes in a shard: its API keys' and its connections' tokens (access and refresh). */
const credentialHashes = (businessId: string) =>
  sql`select ${apiKeys.keyHash} as credential_hash from ${apiKeys} where ${apiKeys.businessId} = ${businessId}
      union all select ${oauthTokens.tokenHash} from ${oauthTokens} where ${oauthTokens.grantId} in
      (select ${oauthGrants.id} from ${oauthGrants} where ${oauthGrants.businessId} = ${businessId})`;

/**
 * Every API key and OAuth token of the business, in the shard it leaves, forwards to the one it goes to: the
 * credentials keep naming the old shard (src/domain/access/credential-forwards.ts). The new shard's own forwards of
 * them, left by an earlier move away from it, are dropped: there the credentials are found themselves.
 */
async function forwardCredentials(deps: Dependencies, businessId: string, from: ShardName, to: ShardName) {
  await deps.onShard(from).db.run(
    sql`insert into ${credentialForwards} (credential_hash, shard, created_at)
        select credential_hash, ${to}, ${isoNow()} from (${credentialHashes(businessId)}) where true
        on conflict (credential_hash) do update set shard = excluded.shard`,
  );
  await deps
    .onShard(to)
    .db.delete(credentialForwards)
    .where(sql`${credentialForwards.credentialHash} in (${credentialHashes(businessId)})`);
}

/**
 * Points the directory at the new shard and clears its mark: every request from then on finds the business there.
 * The owner's email is listed for sign-in in the same batch (an owner from before sharding had none), so that the
 * owner signs in to the new shard.
 */
async function switchShard(deps: Dependencies, businessId: string, to: ShardName) {
  const [owner] = await deps
    .onShard(to)
    .db.select({ email: owners.email })
    .from(owners)
    .where(eq(owners.businessId, businessId));
  const { global } = deps;
  const directory = global
    .update(businessShards)
    .set({ shard: to, movingSince: null })
    .where(eq(businessShards.businessId, businessId));
  if (!owner) {
    await directory;
    return;
  }
  await global.batch([
    directory,
    global.insert(ownerEmails).values({ email: owner.email, businessId, createdAt: isoNow() }).onConflictDoNothing(),
  ]);
}

/** Deletes every row of the business from a shard it has left, children first, leaving only the forwards. */
async function deleteBusiness(db: Database, businessId: string) {
  for (const rows of DELETION_ORDER) await deleteRows(db, rows, businessId);
}

/**
 * The shard an earlier move of the business left its rows in, when it failed after the switch: the business's row
 * there is still marked.
 */
async function leftBehindIn(deps: Dependencies, businessId: string, current: ShardName) {
  for (const shard of SHARD_NAMES.filter((name) => name !== current)) {
    const [row] = await deps
      .onShard(shard)
      .db.select({ id: businesses.id })
      .from(businesses)
      .where(and(eq(businesses.id, businessId), isNotNull(businesses.movingSince)));
    if (row) return shard;
  }
  return undefined;
}

/**
 * Moves the business to shard `to` (`POST /internal/v1/businesses/{id}/move`): 404 for an unknown business, 400 for
 * an unknown shard or the one it is in, unless an earlier move into it stopped before deleting the old rows, which
 * this run then deletes.
 */
export async function moveBusiness(deps: Dependencies, businessId: string, to: string): Promise<MoveOutcome> {
  if (!isShardName(to)) {
    throw invalid(`There is no shard named ${to}: the shards are ${SHARD_NAMES.join(", ")}.`, "to");
  }
  const { shard: from } = await shardOfBusiness(deps.global, businessId);
  const [business] = await deps
    .onShard(from)
    .db.select({ id: businesses.id })
    .from(businesses)
    .where(eq(businesses.id, businessId));
  if (!business) throw notFound("No business has that id.");
  if (from === to) {
    const left = await leftBehindIn(deps, businessId, to);
    if (!left) throw invalid(`The business is already in shard ${to}.`, "to");
    await deleteBusiness(deps.onShard(left).db, businessId);
    return { business_id: businessId, from: left, to, rows_copied: 0 };
  }
  await markMoving(deps, businessId, from);
  const copied = await copyBusiness(deps, businessId, from, to);
  await forwardCredentials(deps, businessId, from, to);
  await switchShard(deps, businessId, to);
  await deleteBusiness(deps.onShard(from).db, businessId);
  return { business_id: businessId, from, to, rows_copied: copied };
}
