import { and, eq, gt, inArray, isNull, lt } from "drizzle-orm";
import type { GlobalDatabase } from "../../db/client";
import { appTokens, oauthClients } from "../../db/schema";
import type { GlobalDependencies } from "../../dependencies";
import { unauthorized } from "../../lib/api-error";
import { invalidScope, OAuthError } from "../../lib/oauth-errors";
import { optionalParameter } from "../../lib/oauth-parameters";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { APP_SCOPE } from "../../schemas/oauth";
import type { OAuthClient } from "./clients";
import { tokenResource } from "./protected-resource";
import { ACCESS_TOKEN_LIFETIME_SECONDS } from "./token-issuance";

/*
 * The app as itself (docs/oauth.md, The app as itself): a confidential client's token from the client credentials
 * grant (RFC 6749 §4.4), scope `app`, for what spans every business connected to it. It names no business and no
 * shard, lives in the global database, lasts an hour and has no refresh token (RFC 6749 §4.4.3).
 */

export const APP_TOKEN_PREFIX = "at_app_";

export type AppTokenResponse = {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  scope: typeof APP_SCOPE;
};

/** The client credentials grant of an authenticated client: a public client has no credentials to be itself with. */
export async function issueAppToken(
  deps: GlobalDependencies,
  client: OAuthClient,
  form: URLSearchParams,
  now: EpochMs,
): Promise<AppTokenResponse> {
  if (client.tokenEndpointAuthMethod === "none") {
    throw new OAuthError("unauthorized_client", "A public client cannot use client_credentials: it has no secret.");
  }
  const scope = optionalParameter(form, "scope");
  if (scope !== undefined && scope !== APP_SCOPE) {
    throw invalidScope(`client_credentials gives the scope "${APP_SCOPE}" only.`);
  }
  const token = randomToken(APP_TOKEN_PREFIX);
  await deps.global.insert(appTokens).values({
    tokenHash: sha256Hex(token),
    clientId: client.id,
    resource: tokenResource(form, deps.baseUrl, null),
    expiresAt: iso(now + ACCESS_TOKEN_LIFETIME_SECONDS * 1000),
    createdAt: iso(now),
  });
  return { access_token: token, token_type: "Bearer", expires_in: ACCESS_TOKEN_LIFETIME_SECONDS, scope: APP_SCOPE };
}

const refused = () =>
  unauthorized(
    "This needs an app's own access token: the client credentials grant with scope app (docs/guides/oauth.md, The app as itself).",
    "invalid_credential",
    "invalid_token",
  );

/**
 * The client whose app token `authorization` presents, while the token is unexpired and unrevoked and its client not deleted, in one
 * query of the global database; anything else is the 401 of a refused token.
 */
export async function appOfToken(
  db: GlobalDatabase,
  authorization: string | undefined,
  now: EpochMs,
): Promise<OAuthClient> {
  if (!authorization) {
    throw unauthorized(
      "An app access token is required: send the header Authorization: Bearer <token>.",
      "authentication_required",
    );
  }
  const token = /^Bearer +(\S+)$/i.exec(authorization.trim())?.[1];
  if (!token?.startsWith(APP_TOKEN_PREFIX)) throw refused();
  const [row] = await db
    .select({ client: oauthClients })
    .from(appTokens)
    .innerJoin(oauthClients, eq(oauthClients.id, appTokens.clientId))
    .where(
      and(
        eq(appTokens.tokenHash, sha256Hex(token)),
        isNull(appTokens.revokedAt),
        gt(appTokens.expiresAt, iso(now)),
        isNull(oauthClients.deletedAt),
      ),
    );
  if (!row) throw refused();
  return row.client;
}

/** App tokens one cron run removes at most; the next run takes the rest. */
export const APP_TOKEN_CLEANUP_LIMIT = 500;

/**
 * The cron's chore (src/index.ts): app tokens a day past their expiry, oldest first, a range of `app_tokens_expires`.
 * They have no refresh token whose reuse would need them kept (docs/decisions.md, Operations). Answers how many went.
 */
export async function removeExpiredAppTokens(deps: GlobalDependencies, now: EpochMs = deps.clock()) {
  const db = deps.global;
  const oldest = db
    .select({ hash: appTokens.tokenHash })
    .from(appTokens)
    .where(lt(appTokens.expiresAt, iso(now - 24 * 60 * 60 * 1000)))
    .orderBy(appTokens.expiresAt)
    .limit(APP_TOKEN_CLEANUP_LIMIT);
  const removed = await db
    .delete(appTokens)
    .where(inArray(appTokens.tokenHash, oldest))
    .returning({ hash: appTokens.tokenHash });
  return removed.length;
}

/**
 * Revocation of an app token (RFC 7009) by its own client: at once, as for a connection's token; another client's, or
 * an unknown one, changes nothing and gets the same answer.
 */
export async function revokeAppToken(deps: GlobalDependencies, clientId: string, token: string, now: EpochMs) {
  await deps.global
    .update(appTokens)
    .set({ revokedAt: iso(now) })
    .where(
      and(eq(appTokens.tokenHash, sha256Hex(token)), eq(appTokens.clientId, clientId), isNull(appTokens.revokedAt)),
    );
}
