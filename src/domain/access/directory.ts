import { and, eq, gt, inArray, sql } from "drizzle-orm";
import type { GlobalDatabase } from "../../db/client";
import { businessShards, ownerEmails } from "../../db/schema";
import { isShardName, LEGACY_SHARD, SANDBOX_SHARD, type ShardName } from "../../db/shards";
import { type EpochMs, iso } from "../../lib/time";

/*
 * The directory of businesses (docs/scaling.md, Regional shards): which shard holds each, read in the global database
 * by the surfaces that know a business before its shard (the runtime API, an owner's sign-in by email). A partner's
 * credential and an owner's session name their shard themselves and never read it.
 */

/** A business the directory does not list was created before sharding: it is in the legacy shard. */
const shardOrLegacy = (shard: string | undefined): ShardName =>
  shard !== undefined && isShardName(shard) ? shard : LEGACY_SHARD;

/**
 * The shard of a business, whether it is being moved (its writes are refused meanwhile) and whether it is a sandbox
 * business (always listed: docs/decisions.md, Sandbox businesses): one indexed read.
 */
export async function shardOfBusiness(
  global: GlobalDatabase,
  businessId: string,
): Promise<{ shard: ShardName; moving: boolean; sandbox: boolean }> {
  const [row] = await global
    .select({ shard: businessShards.shard, movingSince: businessShards.movingSince, sandbox: businessShards.sandbox })
    .from(businessShards)
    .where(eq(businessShards.businessId, businessId));
  return { shard: shardOrLegacy(row?.shard), moving: row?.movingSince != null, sandbox: row?.sandbox === true };
}

/** The shard of the business whose owner signs in with `email` (normalised as sign-in compares it). */
export async function shardOfOwnerEmail(global: GlobalDatabase, email: string): Promise<ShardName> {
  const [row] = await global
    .select({ shard: businessShards.shard })
    .from(ownerEmails)
    .innerJoin(businessShards, eq(businessShards.businessId, ownerEmails.businessId))
    .where(eq(ownerEmails.email, email));
  return shardOrLegacy(row?.shard);
}

/**
 * Lists a new business in its shard, and its owner's email for sign-in: written in the global database before the
 * business's own rows in the shard, so that no business exists that nothing can find.
 */
export async function listBusiness(
  global: GlobalDatabase,
  entry: { businessId: string; shard: ShardName; ownerEmail?: string; sandbox?: boolean },
  now: EpochMs,
): Promise<void> {
  const createdAt = iso(now);
  const directory = global
    .insert(businessShards)
    .values({ businessId: entry.businessId, shard: entry.shard, createdAt, sandbox: entry.sandbox ?? false });
  if (entry.ownerEmail === undefined) {
    await directory;
    return;
  }
  await global.batch([
    directory,
    global.insert(ownerEmails).values({ email: entry.ownerEmail, businessId: entry.businessId, createdAt }),
  ]);
}

/**
 * Lists a new sandbox business as `listBusiness` does, unless `cap` sandbox businesses are listed already: in ONE batch
 * of the global database, which is one transaction, so that however many creations race, at most `cap` entries
 * survive. The entry, then its removal when the count went over (by rowid, the count read on the partial index
 * `business_shards_sandbox`), then the owner's email only if the entry is still there. Answers whether it was listed.
 */
export async function listSandboxWithin(
  global: GlobalDatabase,
  entry: { businessId: string; ownerEmail: string },
  cap: number,
  now: EpochMs,
): Promise<boolean> {
  const createdAt = iso(now);
  const listed = sql`(select count(*) from ${businessShards} where ${businessShards.sandbox} = 1)`;
  const [, removed] = await global.batch([
    global
      .insert(businessShards)
      .values({ businessId: entry.businessId, shard: SANDBOX_SHARD, createdAt, sandbox: true }),
    global
      .delete(businessShards)
      .where(and(eq(sql`rowid`, sql`last_insert_rowid()`), gt(listed, cap)))
      .returning({ removed: businessShards.businessId }),
    // Columns in the table's order: email, business_id, created_at.
    global
      .insert(ownerEmails)
      .select(
        sql`select ${entry.ownerEmail}, ${businessShards.businessId}, ${createdAt} from ${businessShards} where ${businessShards.businessId} = ${entry.businessId}`,
      ),
  ]);
  return removed.length === 0;
}

/**
 * Takes businesses out of the directory with their owners' emails, in one batch of the global database (a sandbox's
 * cleanup: first, so that a failure after it leaves rows the next run finds again, never an entry nothing backs).
 * Each statement binds the ids once: at most 100 of them.
 */
export async function unlistBusinesses(global: GlobalDatabase, businessIds: string[]): Promise<void> {
  await global.batch([
    global.delete(ownerEmails).where(inArray(ownerEmails.businessId, businessIds)),
    global.delete(businessShards).where(inArray(businessShards.businessId, businessIds)),
  ]);
}

/**
 * The statement that marks a business as being moved (docs/scaling.md, Moving a business between shards): the runtime
 * API refuses its writes from then on. A legacy business gets its row, naming `shard`; an earlier mark is kept.
 */
export const markedMoving = (global: GlobalDatabase, businessId: string, shard: ShardName, since: string) =>
  global
    .insert(businessShards)
    .values({ businessId, shard, movingSince: since, createdAt: since })
    .onConflictDoUpdate({
      target: businessShards.businessId,
      set: { movingSince: sql`coalesce(${businessShards.movingSince}, excluded.moving_since)` },
    });

/** The statement that clears the mark of a business whose move was undone: it stays in its shard. */
export const movingMarkCleared = (global: GlobalDatabase, businessId: string) =>
  global.update(businessShards).set({ movingSince: null }).where(eq(businessShards.businessId, businessId));

/**
 * The statements that switch a moved business to `shard`, its mark cleared, and list its owner's email for sign-in
 * (an owner from before sharding had none), for a batch of the global database.
 */
export const movedTo = (
  global: GlobalDatabase,
  businessId: string,
  shard: ShardName,
  ownerEmail: string | undefined,
  now: EpochMs,
) => [
  global.update(businessShards).set({ shard, movingSince: null }).where(eq(businessShards.businessId, businessId)),
  ...(ownerEmail === undefined
    ? []
    : [
        global
          .insert(ownerEmails)
          .values({ email: ownerEmail, businessId, createdAt: iso(now) })
          .onConflictDoNothing(),
      ]),
];
