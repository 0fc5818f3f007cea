import { and, eq, gt, isNull, sql } from "drizzle-orm";
import { isGuardAbort } from "../../db/d1-failures";
import { oauthGrants, oauthTokens } from "../../db/schema";
import { shardOfSecret } from "../../db/shards";
import type { Dependencies } from "../../dependencies";
import { invalidGrant, invalidScope } from "../../lib/oauth-errors";
import { optionalParameter, readParameter, requiredParameter } from "../../lib/oauth-parameters";
import { sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { API_SCOPE, type TokenResponse } from "../../schemas/oauth";
import { businessMoving } from "../access/business-moving";
import type { OAuthClient } from "./clients";
import { tokenResource } from "./protected-resource";
import { revokeTokensOfGrant } from "./revocation";
import { REFRESH_TOKEN_PREFIX } from "./token-format";
import { connectionColumns, previousStatementChangedOneRow, tokenPair } from "./token-issuance";

/**
 * docs/oauth.md, Refresh: a refresh token gives one pair, once; presented again it is refused at once. How long after
 * its rotation it comes back only decides whether the connection is revoked too: within this short grace, a network
 * retry of the same request (or two workers that refreshed at once) is the likelier cause, and the pair the winner
 * got keeps working; from this on, the reuse revokes every token of the connection (RFC 9700 §4.14.2).
 */
export const REUSE_REVOKES_AFTER_MS = 5 * 1000;

/**
 * RFC 9700 §4.14.2: "If a refresh token is compromised and subsequently used by both the attacker and the legitimate
 * client, one of them will present an invalidated refresh token, which will inform the authorization server of the
 * breach." The server cannot tell the attacker from the client, so every token of the connection is revoked and the
 * app must ask the owner again. The connection itself stays (its intakes stay on): only the owner disconnects.
 */
async function refuseReusedRefreshToken(deps: Dependencies, grantId: number, now: EpochMs): Promise<never> {
  await revokeTokensOfGrant(deps, grantId, now);
  throw invalidGrant("The refresh token was already used; every token of this connection is revoked.");
}

/** The token with the client of its connection, by the token's hash. */
const tokenRow = (deps: Dependencies, tokenHash: string) =>
  deps.db
    .select({ token: oauthTokens, ...connectionColumns })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, tokenHash));

export type RefreshTokenRow = Awaited<ReturnType<typeof tokenRow>>[number];

/**
 * The read of the refresh token a token request presents, which the request runs in one batch with its client's
 * (client-authentication.ts), or none when there is nothing to find: no token, a repeated one, or one that names no
 * shard of ours. `refreshTokens` refuses each of those in its own turn. It runs on the shard the token names, or on
 * the one its forward names after its business moved (tokens.ts).
 */
export function refreshTokenRead(deps: Dependencies, form: URLSearchParams) {
  const token = readParameter(form, "refresh_token");
  if (token.repeated || token.value === undefined) return undefined;
  if (shardOfSecret(REFRESH_TOKEN_PREFIX, token.value) === undefined) return undefined;
  return tokenRow(deps, sha256Hex(token.value));
}

/** The SHA-256 of the refresh token a token request presents, as stored (and as its forward is keyed). */
export const refreshTokenHash = (form: URLSearchParams) => sha256Hex(form.get("refresh_token") ?? "");

/** The token is neither revoked nor expired and its connection is on: what a refresh re-checks inside its batch. */
const liveToken = (tokenHash: string, now: EpochMs) =>
  and(
    eq(oauthTokens.tokenHash, tokenHash),
    isNull(oauthTokens.revokedAt),
    gt(oauthTokens.expiresAt, iso(now)),
    sql`exists (select 1 from ${oauthGrants} where ${oauthGrants.id} = ${oauthTokens.grantId} and ${oauthGrants.revokedAt} is null)`,
  );

/**
 * `grant_type=refresh_token` (RFC 6749 §6; docs/guides/oauth.md, 5. Refresh): a new pair for a live, unused refresh
 * token of this client, rotated out in the same batch behind a `changes() = 1` guard, so one token gives at most one
 * pair (docs/oauth.md, Decisions). A used token is `invalid_grant`, and from `REUSE_REVOKES_AFTER_MS` on also revokes
 * the connection's tokens. Another client's token is refused like an unknown one: no client learns whether it exists.
 * The new pair keeps the token's resource, or narrows an unbound one to the resource named (RFC 8707 §2.2).
 */
export async function refreshTokens(
  deps: Dependencies,
  client: OAuthClient,
  form: URLSearchParams,
  row: RefreshTokenRow | undefined,
  now: EpochMs = deps.clock(),
): Promise<TokenResponse> {
  const { db } = deps;
  const refreshToken = requiredParameter(form, "refresh_token");
  // RFC 6749 §6: a scope, when sent, must not exceed the original grant's; there is only "api".
  const scope = optionalParameter(form, "scope");
  if (scope?.split(" ").some((value) => value !== API_SCOPE)) {
    throw invalidScope(`The only scope is "${API_SCOPE}".`);
  }
  // A refresh token is looked up in the shard it names, which the route works on (token-format.ts), or where its
  // forward leads (tokens.ts).
  if (shardOfSecret(REFRESH_TOKEN_PREFIX, refreshToken) === undefined) {
    throw invalidGrant("The refresh token is not valid.");
  }
  const tokenHash = sha256Hex(refreshToken);
  if (row?.token.kind !== "refresh" || row.clientId !== client.id) {
    throw invalidGrant("The refresh token is not valid.");
  }
  if (row.grantRevokedAt) throw invalidGrant("The owner disconnected the app; authorize again.");
  // While the business moves its tokens are being copied: a rotation (or a reuse's revocation) now would be undone
  // by the copy (docs/scaling.md, Moving a business between shards).
  if (row.businessMovingSince !== null) throw businessMoving();
  const { rotatedAt, revokedAt, expiresAt, grantId, codeHash } = row.token;
  if (rotatedAt !== null && rotatedAt <= iso(now - REUSE_REVOKES_AFTER_MS)) {
    return refuseReusedRefreshToken(deps, grantId, now);
  }
  if (revokedAt) throw invalidGrant("The refresh token has been revoked; authorize again.");
  if (rotatedAt !== null) {
    throw invalidGrant(
      "The refresh token was already used: refresh with the one that replaced it. Presented again 5 seconds or more after its use, it revokes every token of this connection.",
    );
  }
  if (expiresAt <= iso(now)) {
    throw invalidGrant("The refresh token has expired after 90 days without use; authorize again.");
  }

  const resource = tokenResource(form, deps.baseUrl, row.token.resource);
  const { statements, response } = tokenPair(deps, { grantId, codeHash, resource }, now);
  try {
    await db.batch([
      db
        .update(oauthTokens)
        .set({ rotatedAt: iso(now) })
        .where(and(liveToken(tokenHash, now), isNull(oauthTokens.rotatedAt))),
      previousStatementChangedOneRow(deps),
      ...statements,
    ]);
  } catch (error) {
    // The token changed between the read and the batch: another refresh used it (a moment ago, so this is no
    // reuse to revoke for), or a revocation or the owner's disconnection ended it. Either way no pair.
    if (isGuardAbort(error)) {
      throw invalidGrant(
        "The refresh token was used by another request at the same time, or revoked: refresh with the token that request received, or authorize again.",
      );
    }
    throw error;
  }
  return response;
}
