import { sha256 } from "@oslojs/crypto/sha2";
import { constantTimeEqual } from "@oslojs/crypto/subtle";
import { encodeBase64urlNoPadding } from "@oslojs/encoding";
import { and, eq, gt, isNull, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { isGuardAbort } from "../../db/errors";
import { oauthCodes, oauthGrants, oauthTokens } from "../../db/schema";
import { guard } from "../../db/snapshot-guard";
import { invalidGrant, invalidRequest, invalidScope, OAuthError } from "../../lib/oauth-errors";
import { CODE_VERIFIER_PATTERN, optionalParameter, requiredParameter } from "../../lib/oauth-parameters";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { API_SCOPE, type TokenResponse } from "../../schemas/oauth";
import { authenticateClient } from "./client-authentication";
import type { OAuthClient } from "./clients";
import { revokeTokensOfGrant } from "./revocation";
import { spendAddressBudget, spendClientBudget, type TokenBudget } from "./token-budget";
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX, TOKEN_PATTERN } from "./token-format";

/** Spec: OAuth client, tokens and codes: "access token: valid 1 hour (expires_in 3600)". */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 3600;
/** Spec: "refresh token: valid 90 days; rotated on every use". Each rotation starts a new 90 days. */
export const REFRESH_TOKEN_LIFETIME_MS = 90 * 24 * 60 * 60 * 1000;

const CODE_PATTERN = /^ac_[A-Za-z0-9_-]{43}$/;

const plusSeconds = (now: EpochMs, seconds: number) => iso(now + seconds * 1000);

// --- Issuing --------------------------------------------------------------------------------------------------

/** A new access + refresh token pair of a connection, as insert statements and the response that names them. */
function tokenPair(db: Database, grantId: number | SQL, codeHash: string | SQL | null, now: EpochMs) {
  const accessToken = randomToken(ACCESS_TOKEN_PREFIX);
  const refreshToken = randomToken(REFRESH_TOKEN_PREFIX);
  const createdAt = iso(now);
  const statements = [
    db.insert(oauthTokens).values({
      tokenHash: sha256Hex(accessToken),
      kind: "access",
      grantId,
      codeHash,
      expiresAt: plusSeconds(now, ACCESS_TOKEN_LIFETIME_SECONDS),
      createdAt,
    }),
    db.insert(oauthTokens).values({
      tokenHash: sha256Hex(refreshToken),
      kind: "refresh",
      grantId,
      codeHash,
      expiresAt: iso(now + REFRESH_TOKEN_LIFETIME_MS),
      createdAt,
    }),
  ] as const;
  const response: TokenResponse = {
    access_token: accessToken,
    token_type: "Bearer",
    expires_in: ACCESS_TOKEN_LIFETIME_SECONDS,
    refresh_token: refreshToken,
    scope: API_SCOPE,
  };
  return { statements, response };
}

/** The batch's previous statement changed exactly one row (SQLite's `changes()`), or the batch aborts. */
const previousStatementChangedOneRow = (db: Database) => guard(db, sql`changes() = 1`);

const encoder = new TextEncoder();

/** RFC 7636 §4.6: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge, compared in constant time. */
function verifierMatches(verifier: string, challenge: string): boolean {
  const computed = encoder.encode(encodeBase64urlNoPadding(sha256(encoder.encode(verifier))));
  const expected = encoder.encode(challenge);
  return computed.length === expected.length && constantTimeEqual(computed, expected);
}

/**
 * RFC 6749 §4.1.2: "If an authorization code is used more than once, the authorization server MUST deny the
 * request and SHOULD revoke (when possible) all tokens previously issued based on that authorization code."
 * The tokens of a code are its family: the pair it issued and every pair rotated from them (they keep its hash).
 */
async function refuseReplayedCode(db: Database, codeHash: string, now: EpochMs): Promise<never> {
  await db
    .update(oauthTokens)
    .set({ revokedAt: iso(now) })
    .where(and(eq(oauthTokens.codeHash, codeHash), isNull(oauthTokens.revokedAt)));
  throw invalidGrant("The authorization code has already been used; the tokens issued from it are revoked.");
}

/**
 * `grant_type=authorization_code` (spec: Partner sign-in, step 4; RFC 6749 §4.1.3; RFC 7636 §4.5). The code must
 * be unused, younger than 10 minutes, issued to this client for a connection that is still on, for this exact
 * redirect_uri, and the verifier must hash to its challenge. Redemption is single use even under concurrency: the
 * code is marked used by `UPDATE ... WHERE used_at IS NULL`, and the new tokens are inserted in the same batch
 * (one transaction) behind a guard that this update changed one row; of two simultaneous redemptions exactly one
 * gets tokens, and the other is a replay.
 */
export async function exchangeAuthorizationCode(
  db: Database,
  client: OAuthClient,
  form: URLSearchParams,
  now: EpochMs = Date.now(),
): Promise<TokenResponse> {
  const code = requiredParameter(form, "code");
  const redirectUri = requiredParameter(form, "redirect_uri");
  const verifier = optionalParameter(form, "code_verifier");
  if (verifier === undefined) throw invalidRequest("The parameter code_verifier is required: PKCE is mandatory.");
  if (!CODE_VERIFIER_PATTERN.test(verifier)) {
    throw invalidRequest("The code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, -, ., _ and ~ (RFC 7636).");
  }
  if (!CODE_PATTERN.test(code)) throw invalidGrant("The authorization code is not valid.");
  const codeHash = sha256Hex(code);
  const row = await db
    .select({ code: oauthCodes, clientId: oauthGrants.clientId, grantRevokedAt: oauthGrants.revokedAt })
    .from(oauthCodes)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthCodes.grantId))
    .where(eq(oauthCodes.codeHash, codeHash))
    .get();
  // RFC 6749 §4.1.3: "ensure that the authorization code was issued to the authenticated confidential client".
  if (!row || row.clientId !== client.id) throw invalidGrant("The authorization code is not valid.");
  if (row.grantRevokedAt) throw invalidGrant("The owner disconnected the app; authorize again.");
  if (row.code.usedAt) return refuseReplayedCode(db, codeHash, now);
  if (row.code.expiresAt <= iso(now)) {
    throw invalidGrant("The authorization code has expired: codes are valid for 10 minutes.");
  }
  // RFC 6749 §4.1.3: the redirect_uri must be identical to the one of the authorization request.
  if (row.code.redirectUri !== redirectUri) {
    throw invalidGrant("The redirect_uri differs from the one of the authorization request.");
  }
  if (!verifierMatches(verifier, row.code.codeChallenge)) {
    throw invalidGrant("The code_verifier does not match the code_challenge.");
  }

  const { statements, response } = tokenPair(db, row.code.grantId, codeHash, now);
  try {
    await db.batch([
      db
        .update(oauthCodes)
        .set({ usedAt: iso(now) })
        .where(and(eq(oauthCodes.codeHash, codeHash), isNull(oauthCodes.usedAt))),
      previousStatementChangedOneRow(db),
      ...statements,
    ]);
  } catch (error) {
    // Another redemption (or the owner's disconnection) marked the code used between our read and this batch.
    if (isGuardAbort(error)) return refuseReplayedCode(db, codeHash, now);
    throw error;
  }
  return response;
}

/**
 * docs/oauth.md, Refresh: a refresh token gives one pair, once; presented again it is refused at once. How long after
 * its rotation it comes back only decides whether the connection is revoked too: before this, two workers that
 * refreshed at once (or a retry after a lost answer) are the likelier cause, and the pair the winner got keeps
 * working; from this on, the reuse revokes every token of the connection (RFC 9700 §4.14.2).
 */
export const REUSE_REVOKES_AFTER_MS = 60 * 1000;

/**
 * RFC 9700 §4.14.2: "If a refresh token is compromised and subsequently used by both the attacker and the legitimate
 * client, one of them will present an invalidated refresh token, which will inform the authorization server of the
 * breach." The server cannot tell the attacker from the client, so every token of the connection is revoked and the
 * app must ask the owner again. The connection itself stays (its intakes stay on): only the owner disconnects.
 */
async function refuseReusedRefreshToken(db: Database, grantId: number, now: EpochMs): Promise<never> {
  await revokeTokensOfGrant(db, grantId, now);
  throw invalidGrant("The refresh token was already used; every token of this connection is revoked.");
}

/** The refresh token with the client of its connection, or undefined. */
const readRefreshToken = (db: Database, tokenHash: string) =>
  db
    .select({ token: oauthTokens, clientId: oauthGrants.clientId, grantRevokedAt: oauthGrants.revokedAt })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .where(eq(oauthTokens.tokenHash, tokenHash))
    .get();

/** The token is neither revoked nor expired and its connection is on: what a refresh re-checks inside its batch. */
const liveToken = (tokenHash: string, now: EpochMs) =>
  and(
    eq(oauthTokens.tokenHash, tokenHash),
    isNull(oauthTokens.revokedAt),
    gt(oauthTokens.expiresAt, iso(now)),
    sql`exists (select 1 from ${oauthGrants} where ${oauthGrants.id} = ${oauthTokens.grantId} and ${oauthGrants.revokedAt} is null)`,
  );

/**
 * `grant_type=refresh_token` (spec: Partner sign-in, step 5; RFC 6749 §6): a new pair for a live, unused refresh
 * token of this client, which is rotated out (`rotated_at`) in the same transaction. One refresh token gives at most
 * one pair, under concurrency too: the rotation is `UPDATE ... WHERE rotated_at IS NULL` (and live), and the new pair
 * is inserted in the same batch behind a guard that this update changed one row (SQLite's `changes()`); of two
 * simultaneous refreshes with one token exactly one gets a pair, the other `invalid_grant`. After the client's read,
 * two D1 round trips: the token's read, then the batch (or the revocation of a reuse).
 * A used token presented again is `invalid_grant`; from `REUSE_REVOKES_AFTER_MS` after its rotation on, it also
 * revokes every token of the connection. 90 days without use, a disconnected app, a revoked token: `invalid_grant`
 * (spec: Errors, OAuth). Another client's token is refused like an unknown one and revokes nothing (RFC 6749 §6:
 * "ensure that the refresh token was issued to the authenticated client"), as revocation leaves it alone: neither
 * endpoint tells another client whether a token exists.
 */
export async function refreshTokens(
  db: Database,
  client: OAuthClient,
  form: URLSearchParams,
  now: EpochMs = Date.now(),
): Promise<TokenResponse> {
  const refreshToken = requiredParameter(form, "refresh_token");
  // RFC 6749 §6: a scope, when sent, must not exceed the original grant's; there is only "api".
  const scope = optionalParameter(form, "scope");
  if (scope?.split(" ").some((value) => value !== API_SCOPE)) {
    throw invalidScope(`The only scope is "${API_SCOPE}".`);
  }
  if (!refreshToken.startsWith(REFRESH_TOKEN_PREFIX) || !TOKEN_PATTERN.test(refreshToken)) {
    throw invalidGrant("The refresh token is not valid.");
  }
  const tokenHash = sha256Hex(refreshToken);
  const row = await readRefreshToken(db, tokenHash);
  if (row?.token.kind !== "refresh" || row.clientId !== client.id) {
    throw invalidGrant("The refresh token is not valid.");
  }
  if (row.grantRevokedAt) throw invalidGrant("The owner disconnected the app; authorize again.");
  const { rotatedAt, revokedAt, expiresAt, grantId, codeHash } = row.token;
  if (rotatedAt !== null && rotatedAt <= iso(now - REUSE_REVOKES_AFTER_MS)) {
    return refuseReusedRefreshToken(db, grantId, now);
  }
  if (revokedAt) throw invalidGrant("The refresh token has been revoked; authorize again.");
  if (rotatedAt !== null) {
    throw invalidGrant(
      "The refresh token was already used: refresh with the one that replaced it. Presented again 60 seconds or more after its use, it revokes every token of this connection.",
    );
  }
  if (expiresAt <= iso(now)) {
    throw invalidGrant("The refresh token has expired after 90 days without use; authorize again.");
  }

  const { statements, response } = tokenPair(db, grantId, codeHash, now);
  try {
    await db.batch([
      db
        .update(oauthTokens)
        .set({ rotatedAt: iso(now) })
        .where(and(liveToken(tokenHash, now), isNull(oauthTokens.rotatedAt))),
      previousStatementChangedOneRow(db),
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

/**
 * Dispatches a token request by `grant_type` (RFC 6749 §4.1.3, §6; `unsupported_grant_type` otherwise), within the
 * token endpoint's budget (docs/oauth.md, Token budget): the authenticated client's, spent before any work on its
 * grant; a request refused before its client is authenticated spends its address's instead.
 */
export async function tokenRequest(
  db: Database,
  budget: TokenBudget,
  authorization: string | undefined,
  form: URLSearchParams,
  now: EpochMs = Date.now(),
): Promise<TokenResponse> {
  let grantType: string;
  let client: OAuthClient;
  try {
    grantType = requiredParameter(form, "grant_type");
    client = await authenticateClient(db, authorization, form);
  } catch (error) {
    if (error instanceof OAuthError) await spendAddressBudget(budget);
    throw error;
  }
  await spendClientBudget(budget, client);
  if (grantType === "authorization_code") return exchangeAuthorizationCode(db, client, form, now);
  if (grantType === "refresh_token") return refreshTokens(db, client, form, now);
  throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token.");
}
