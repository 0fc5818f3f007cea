import { and, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import { intakes, oauthClients, oauthCodes, oauthGrants, oauthTokens, webhookEndpoints } from "../../db/schema";
import { LEGACY_SHARD, SHARD_NAMES } from "../../db/shards";
import type { Dependencies, GlobalDependencies } from "../../dependencies";
import { type EpochMs, iso } from "../../lib/time";
import { closeListeningSessions } from "../webhooks/listening-sessions";
import { clientRead, type OAuthClient } from "./clients";

/*
 * A shard holds a copy of every client connected to one of its businesses, which the token endpoint authenticates
 * against (docs/oauth.md, Decisions). A change of the registration (update, secret rotation, deletion) is written in
 * the global database first, raising `revision`, then into every shard's copy; a copy takes a row only over an older
 * revision, so changes written out of order leave the newest everywhere.
 */

/** The statement that brings `deps`'s copy of the client to `client`, unless the copy is as new already. */
const copyUpdate = (deps: Dependencies, { id, ...columns }: OAuthClient) =>
  deps.db
    .update(oauthClients)
    .set(columns)
    .where(and(eq(oauthClients.id, id), lt(oauthClients.revision, columns.revision)));

/**
 * Writes a changed client into its copies, in every shard at once (the legacy shard's is the global row itself). A
 * shard that fails fails the request: the change is then sent again, and its revision reaches every copy.
 */
export async function updateCopies(deps: GlobalDependencies, client: OAuthClient): Promise<void> {
  const shards = SHARD_NAMES.filter((shard) => shard !== LEGACY_SHARD);
  await Promise.all(shards.map((shard) => copyUpdate(deps.onShard(shard), client)));
}

/**
 * A deleted client's connections in one shard, each ended as the owner's disconnection ends one
 * (src/domain/access/app-connections.ts; docs/oauth.md, Managing your app), in one batch with its copy marked deleted:
 * the connection marked, its tokens revoked, its unused codes spent, its intakes switched off, its endpoints deleted
 * with their pending deliveries and its listening sessions closed. Actions and knowledge stay, as the owner left them.
 * A code exchange or refresh racing it fails its own batch's guard (the code spent, the connection off).
 */
export async function endConnections(deps: Dependencies, client: OAuthClient, at: string): Promise<void> {
  const { db } = deps;
  const ofClient = eq(oauthGrants.clientId, client.id);
  const grantIds = db.select({ id: oauthGrants.id }).from(oauthGrants).where(ofClient);
  const [, , , , , endpoints] = await db.batch([
    copyUpdate(deps, client),
    db
      .update(oauthGrants)
      .set({ revokedAt: sql`coalesce(${oauthGrants.revokedAt}, ${at})` })
      .where(ofClient),
    db
      .update(oauthTokens)
      .set({ revokedAt: at })
      .where(and(inArray(oauthTokens.grantId, grantIds), isNull(oauthTokens.revokedAt))),
    db
      .update(oauthCodes)
      .set({ usedAt: at })
      .where(and(inArray(oauthCodes.grantId, grantIds), isNull(oauthCodes.usedAt))),
    db
      .update(intakes)
      .set({ enabled: false, updatedAt: at })
      .where(and(inArray(intakes.oauthGrantId, grantIds), eq(intakes.enabled, true))),
    // By the (business, side) index: each connection's endpoints are one range of it.
    db
      .delete(webhookEndpoints)
      .where(
        sql`(${webhookEndpoints.businessId}, ${webhookEndpoints.oauthGrantId}) in (select ${oauthGrants.businessId}, ${oauthGrants.id} from ${oauthGrants} where ${ofClient})`,
      )
      .returning({ url: webhookEndpoints.url }),
  ]);
  await closeListeningSessions(
    deps,
    endpoints.map((endpoint) => endpoint.url),
    "accessEnded",
  );
}

/**
 * After an approval copied the client into the business's shard (authorization.ts): the global row is read again and
 * the copy brought to it, or the connection ended if the client was deleted meanwhile. The approval writes its copy
 * before this read and a change writes the global row before its copies, so whichever comes second sees the other:
 * no copy keeps a secret or a registration that the global row has left.
 */
export async function refreshCopy(deps: Dependencies, clientId: string, now: EpochMs): Promise<void> {
  const latest = await clientRead(deps.global, clientId).get();
  if (!latest) return;
  if (latest.deletedAt !== null) await endConnections(deps, latest, iso(now));
  else await copyUpdate(deps, latest);
}
