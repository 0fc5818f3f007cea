import { and, eq, gte, lt, notExists, or, sql } from "drizzle-orm";
import { runBatch, statementsThatFit } from "../../db/batches";
import { apiKeys, businesses, oauthGrants, ownerSessions, owners } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { type EpochMs, iso } from "../../lib/time";
import { unlistBusinesses } from "../access/directory";
import { DELETION_ORDER } from "../operations/business-rows";

/*
 * Sandbox businesses unused for 30 days are deleted, with every row of theirs and their directory entries
 * (docs/decisions.md, Sandbox businesses): the cron's chore on each shard (src/index.ts), in bounded chunks.
 */

export const SANDBOX_UNUSED_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
/**
 * How many sandbox businesses one run deletes per shard at most, in one batch of one statement per table of a
 * business (src/domain/operations/business-rows.ts) naming them all, well within D1's bound parameters; the cron runs
 * every minute, so the next run takes the rest.
 */
const SANDBOX_CLEANUP_CHUNK = 10;

/**
 * The sandbox businesses of the shard last used before `cutoff`, oldest first. A use is the latest of: the business's
 * creation, any of its keys' last use (recorded to the hour, src/domain/access/last-use.ts), its owner's latest
 * sign-in (kept on the owner, since sessions go a day after they expire) or a session started since, and any OAuth
 * connection's last use. A range scan of the partial index `businesses_sandbox_created`: live businesses are not read.
 */
function unusedSandboxes(deps: Dependencies, cutoff: string, limit: number) {
  const { db } = deps;
  const usedSince = (table: typeof apiKeys | typeof oauthGrants) =>
    notExists(
      db
        .select({ one: sql`1` })
        .from(table)
        .where(and(eq(table.businessId, businesses.id), gte(table.lastUsedAt, cutoff))),
    );
  const signedInSince = notExists(
    db
      .select({ one: sql`1` })
      .from(owners)
      .leftJoin(ownerSessions, eq(ownerSessions.ownerId, owners.id))
      .where(
        and(
          eq(owners.businessId, businesses.id),
          sql`(${owners.lastSignedInAt} >= ${cutoff} or ${ownerSessions.createdAt} >= ${cutoff})`,
        ),
      ),
  );
  return db
    .select({ id: businesses.id })
    .from(businesses)
    .where(
      and(
        // The literal, so that SQLite sees the partial index's own condition.
        sql`${businesses.sandbox} = 1`,
        lt(businesses.createdAt, cutoff),
        usedSince(apiKeys),
        usedSince(oauthGrants),
        signedInSince,
      ),
    )
    .orderBy(businesses.createdAt)
    .limit(limit);
}

/**
 * One run on `deps.shard`: finds up to `limit` sandbox businesses unused for 30 days and deletes each, first its
 * directory entry and owner's email in the global database (so that a failure after it leaves rows the next run finds
 * again, never an entry nothing backs), then the rows of them all in one batch of the shard, children first. Answers the ids
 * deleted. A business used between the read and its deletion is deleted still: a window of milliseconds in 30 days.
 */
export async function removeUnusedSandboxes(
  deps: Dependencies,
  now: EpochMs = deps.clock(),
  limit = SANDBOX_CLEANUP_CHUNK,
): Promise<string[]> {
  const unused = await unusedSandboxes(deps, iso(now - SANDBOX_UNUSED_LIFETIME_MS), limit);
  const ids = unused.map((row) => row.id);
  if (ids.length === 0) return [];
  const { db } = deps;
  await unlistBusinesses(deps.global, ids);
  await runBatch(
    db,
    DELETION_ORDER.flatMap((rows) =>
      statementsThatFit(ids, (slice) => db.delete(rows.table).where(or(...slice.map(rows.of)))),
    ),
  );
  return ids;
}
