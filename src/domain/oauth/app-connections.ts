import { and, asc, eq, gt, isNull } from "drizzle-orm";
import { businesses, oauthGrants } from "../../db/schema";
import { SHARD_NAMES } from "../../db/shards";
import type { GlobalDependencies } from "../../dependencies";

/*
 * The businesses connected to an app (docs/guides/oauth.md, The app as itself), so that a platform can reconcile its
 * own list: every shard holds the connections of its businesses, so each is read by the index on (client, business)
 * from the cursor on, at most a page and one row each, in parallel, and the pages are merged in business id order.
 */

export type AppConnection = { id: string; handle: string; name: string; connectedAt: string };

/**
 * A page of the app's live connections, by business id, after `startingAfter`. A business being moved has its rows in
 * two shards for a while: it is listed once.
 */
export async function appConnections(
  deps: GlobalDependencies,
  clientId: string,
  page: { limit: number; startingAfter?: string },
): Promise<{ data: AppConnection[]; hasMore: boolean }> {
  const perShard = await Promise.all(
    SHARD_NAMES.map((shard) => {
      const { db } = deps.onShard(shard);
      return db
        .select({
          id: businesses.id,
          handle: businesses.handle,
          name: businesses.name,
          connectedAt: oauthGrants.createdAt,
        })
        .from(oauthGrants)
        .innerJoin(businesses, eq(businesses.id, oauthGrants.businessId))
        .where(
          and(
            eq(oauthGrants.clientId, clientId),
            isNull(oauthGrants.revokedAt),
            page.startingAfter === undefined ? undefined : gt(oauthGrants.businessId, page.startingAfter),
          ),
        )
        .orderBy(asc(oauthGrants.businessId))
        .limit(page.limit + 1);
    }),
  );
  const merged = new Map<string, AppConnection>();
  for (const row of perShard.flat().sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    if (!merged.has(row.id)) merged.set(row.id, row);
  }
  const rows = [...merged.values()];
  return { data: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}
