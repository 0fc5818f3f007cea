import { and, inArray, isNull, lt } from "drizzle-orm";
import { oauthClients } from "../../db/schema";
import type { GlobalDependencies } from "../../dependencies";
import { type EpochMs, iso } from "../../lib/time";

/**
 * Registration is open, so a client that no owner approved within 24 hours of its registration is removed: until an
 * approval it can do nothing, and only fills the global database, which every sign-in and consent needs
 * (docs/guides/oauth.md, 1. Register once). An app registers when it first connects, and its owner approves at once.
 */
export const UNAPPROVED_CLIENT_LIFETIME_MS = 24 * 60 * 60 * 1000;
/** How many clients one run removes at most; the cron runs every minute and the next run takes the rest. */
export const CLIENT_CLEANUP_LIMIT = 500;

/**
 * The statement of one run: removes clients that no owner approved within 24 hours of their registration, oldest
 * first, at most `limit` (a client has nothing else to remove: without an approval it has no connection, code or
 * token). The candidates are a range scan of the partial index `oauth_clients_unapproved`, which holds only
 * never-approved clients, so approved clients, however many, cost the run nothing.
 */
export function unapprovedClientsRemoval(deps: GlobalDependencies, now: EpochMs, limit: number) {
  // Clients live in the global database; a shard's copies are of approved clients only (authorization.ts).
  const db = deps.global;
  const oldest = db
    .select({ id: oauthClients.id })
    .from(oauthClients)
    .where(
      and(isNull(oauthClients.firstApprovedAt), lt(oauthClients.createdAt, iso(now - UNAPPROVED_CLIENT_LIFETIME_MS))),
    )
    .orderBy(oauthClients.createdAt)
    .limit(limit);
  return db.delete(oauthClients).where(inArray(oauthClients.id, oldest)).returning({ id: oauthClients.id });
}

/** The cron's chore (src/index.ts): one chunk of unapproved clients; answers how many were removed. */
export async function removeUnapprovedClients(
  deps: GlobalDependencies,
  now: EpochMs = deps.clock(),
  limit = CLIENT_CLEANUP_LIMIT,
): Promise<number> {
  return (await unapprovedClientsRemoval(deps, now, limit)).length;
}
