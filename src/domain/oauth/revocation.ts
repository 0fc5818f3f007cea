import { and, eq, isNull, sql } from "drizzle-orm";
import { oauthGrants, oauthTokens, webhookEndpoints } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { optionalParameter, requiredParameter } from "../../lib/oauth-parameters";
import { sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { businessMoving } from "../access/business-moving";
import { foundThroughForwards } from "../access/credential-forwards";
import { isOwnListenerEndpoint } from "../webhooks/listener-endpoints";
import { closeListeningSessions } from "../webhooks/listening-sessions";
import { APP_TOKEN_PREFIX, revokeAppToken } from "./app-tokens";
import { identifyRevokingClient } from "./client-authentication";
import { shardOfToken } from "./token-format";
import { connectionColumns } from "./token-issuance";

/**
 * Every live token of a connection, revoked (reuse detection, revocation): the app has no access left until the owner
 * authorizes it again, so its listening sessions end too, their endpoints deleted in the same batch and their sockets
 * closed (docs/webhooks.md, Listening sessions end). Its registered endpoints stay with the connection.
 */
export async function revokeTokensOfGrant(deps: Dependencies, grantId: number, now: EpochMs) {
  const { db } = deps;
  const [, sessionsEnded] = await db.batch([
    db
      .update(oauthTokens)
      .set({ revokedAt: iso(now) })
      .where(and(eq(oauthTokens.grantId, grantId), isNull(oauthTokens.revokedAt))),
    db
      .delete(webhookEndpoints)
      .where(
        and(
          eq(
            webhookEndpoints.businessId,
            sql`(select ${oauthGrants.businessId} from ${oauthGrants} where ${eq(oauthGrants.id, grantId)})`,
          ),
          eq(webhookEndpoints.oauthGrantId, grantId),
          isOwnListenerEndpoint,
        ),
      )
      .returning({ url: webhookEndpoints.url }),
  ]);
  await closeListeningSessions(
    deps,
    sessionsEnded.map((endpoint) => endpoint.url),
    "accessEnded",
  );
}

/** A token's connection and its client, by the token's hash. */
const connectionOfToken = (deps: Dependencies, tokenHash: string) =>
  deps.db
    .select({
      grantId: oauthTokens.grantId,
      clientId: oauthGrants.clientId,
      businessMovingSince: connectionColumns.businessMovingSince,
    })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, tokenHash))
    .get();

/**
 * The parameters of a revocation request (RFC 7009 §2.1, with the client's own of RFC 6749 §2.3.1): the only members
 * read from a JSON body (docs/decisions.md, Exactly as the contract says); others are ignored like unknown form
 * parameters.
 */
export const REVOCATION_PARAMETERS = ["token", "token_type_hint", "client_id", "client_secret"] as const;

/**
 * Revocation (RFC 7009 §2.1; docs/guides/oauth.md, 6. Revoke): either token of the client, named by its client_id
 * (a secret sent must be right), revokes every token of its connection at once; the connection and its intakes stay.
 * An unknown token, or another client's, changes nothing and gets the same answer (RFC 7009 §2.2), so that the
 * endpoint tells nobody whether a token exists.
 */
export async function revocationRequest(
  deps: Dependencies,
  authorization: string | undefined,
  parameters: URLSearchParams,
  now: EpochMs = deps.clock(),
): Promise<void> {
  const token = requiredParameter(parameters, "token");
  const client = await identifyRevokingClient(deps, authorization, parameters);
  // RFC 7009 §2.1: token_type_hint is only a hint; both kinds are found by the same lookup.
  optionalParameter(parameters, "token_type_hint");
  // An app's own token names no shard: it is in the global database, which the route's legacy shard holds.
  if (token.startsWith(APP_TOKEN_PREFIX)) return revokeAppToken(deps, client.id, token, now);
  // A token is looked up in the shard it names, which the route works on (token-format.ts), then where its forward
  // leads if its business moved (docs/scaling.md, Moving a business between shards): one that names none of ours
  // changes nothing.
  if (shardOfToken(token) === undefined) return;
  const tokenHash = sha256Hex(token);
  const here = await connectionOfToken(deps, tokenHash);
  const { there, found } = here
    ? { there: deps, found: here }
    : ((await foundThroughForwards(deps, tokenHash, (shard) => connectionOfToken(shard, tokenHash))) ?? {});
  if (!there || !found || found.clientId !== client.id) return;
  // RFC 7009 §2.2.1: a server that cannot revoke now answers 503 with Retry-After; a revocation during a move would
  // be undone by the copy of the tokens (docs/scaling.md, Moving a business between shards).
  if (found.businessMovingSince !== null) throw businessMoving();
  await revokeTokensOfGrant(there, found.grantId, now);
}
