import { and, eq, isNull, lt, or } from "drizzle-orm";
import { apiKeys, oauthGrants } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { type EpochMs, iso } from "../../lib/time";
import type { Principal } from "./principals";

/** The owner's overview says when each key and app was last used, to the hour: one write an hour per credential. */
export const LAST_USE_PRECISION_MS = 3_600_000;

/** Whether this request should record the credential's use: never recorded, or last recorded over an hour ago. */
export const useToRecord = (principal: Principal, now: EpochMs): boolean =>
  principal.lastUsedAt === null || principal.lastUsedAt < iso(now - LAST_USE_PRECISION_MS);

/**
 * Records that the credential was used, for the owner's overview, which lists the active keys and connected apps with
 * when each was last used (docs/decisions.md, Partners of one business stay apart). Run after the answer (`waitUntil`),
 * never on the request's path; conditional, so that concurrent requests of one credential write it once.
 */
export async function recordUse(deps: Dependencies, principal: Principal, now: EpochMs): Promise<void> {
  const { db } = deps;
  const at = iso(now);
  const stale = (column: typeof apiKeys.lastUsedAt | typeof oauthGrants.lastUsedAt) =>
    or(isNull(column), lt(column, iso(now - LAST_USE_PRECISION_MS)));
  if (principal.kind === "api_key") {
    await db
      .update(apiKeys)
      .set({ lastUsedAt: at })
      .where(and(eq(apiKeys.id, principal.apiKeyId), stale(apiKeys.lastUsedAt)));
  } else {
    await db
      .update(oauthGrants)
      .set({ lastUsedAt: at })
      .where(and(eq(oauthGrants.id, principal.grantId), stale(oauthGrants.lastUsedAt)));
  }
}
