import { sha256 } from "@oslojs/crypto/sha2";
import { constantTimeEqual } from "@oslojs/crypto/subtle";
import { encodeBase64urlNoPadding } from "@oslojs/encoding";
import { and, eq, isNull } from "drizzle-orm";
import { isGuardAbort } from "../../db/d1-failures";
import { oauthCodes, oauthGrants, oauthTokens } from "../../db/schema";
import { shardOfSecret } from "../../db/shards";
import type { Dependencies } from "../../dependencies";
import { invalidGrant, invalidRequest } from "../../lib/oauth-errors";
import { CODE_VERIFIER_PATTERN, optionalParameter, readParameter, requiredParameter } from "../../lib/oauth-parameters";
import { sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import type { TokenResponse } from "../../schemas/oauth";
import { businessMoving } from "../access/business-moving";
import type { OAuthClient } from "./clients";
import { tokenResource } from "./protected-resource";
import { AUTHORIZATION_CODE_PREFIX } from "./token-format";
import { connectionColumns, previousStatementChangedOneRow, tokenPair } from "./token-issuance";

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
async function refuseReplayedCode(deps: Dependencies, codeHash: string, now: EpochMs): Promise<never> {
  await deps.db
    .update(oauthTokens)
    .set({ revokedAt: iso(now) })
    .where(and(eq(oauthTokens.codeHash, codeHash), isNull(oauthTokens.revokedAt)));
  throw invalidGrant("The authorization code has already been used; the tokens issued from it are revoked.");
}

/** The code with the client of its connection, by the code's hash. */
const codeRow = (deps: Dependencies, codeHash: string) =>
  deps.db
    .select({ code: oauthCodes, ...connectionColumns })
    .from(oauthCodes)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthCodes.grantId))
    .where(eq(oauthCodes.codeHash, codeHash));

export type CodeRow = Awaited<ReturnType<typeof codeRow>>[number];

/**
 * The read of the code a token request presents, which the request runs in one batch with its client's
 * (client-authentication.ts), or none when there is nothing to find: no code, a repeated one, or one that does not name
 * this shard. `exchangeAuthorizationCode` refuses each of those in its own turn.
 */
export function codeRead(deps: Dependencies, form: URLSearchParams) {
  const code = readParameter(form, "code");
  if (code.repeated || code.value === undefined) return undefined;
  if (shardOfSecret(AUTHORIZATION_CODE_PREFIX, code.value) !== deps.shard) return undefined;
  return codeRow(deps, sha256Hex(code.value));
}

/**
 * `grant_type=authorization_code` (RFC 6749 §4.1.3; RFC 7636 §4.5; docs/guides/oauth.md, 3. Exchange the code): an
 * unused code under 10 minutes old, this client's, of a live connection, for this redirect_uri and verifier, and for
 * the resource it was requested for, if any (RFC 8707 §2.2), which is a refusal that does not spend the code. Single
 * use under concurrency too (docs/oauth.md, Decisions): marked used and the tokens inserted in one batch behind a
 * `changes() = 1` guard, so of two redemptions one gets tokens and the other is a replay. Two round trips in all.
 */
export async function exchangeAuthorizationCode(
  deps: Dependencies,
  client: OAuthClient,
  form: URLSearchParams,
  row: CodeRow | undefined,
  now: EpochMs = deps.clock(),
): Promise<TokenResponse> {
  const { db } = deps;
  const code = requiredParameter(form, "code");
  const redirectUri = requiredParameter(form, "redirect_uri");
  const verifier = optionalParameter(form, "code_verifier");
  if (verifier === undefined) throw invalidRequest("The parameter code_verifier is required: PKCE is mandatory.");
  if (!CODE_VERIFIER_PATTERN.test(verifier)) {
    throw invalidRequest("The code_verifier must be 43 to 128 characters of A-Z, a-z, 0-9, -, ., _ and ~ (RFC 7636).");
  }
  // A code is looked up only in the shard it names, which the route works on (token-format.ts): a code that names
  // another, or none of ours, is not valid here.
  if (shardOfSecret(AUTHORIZATION_CODE_PREFIX, code) !== deps.shard) {
    throw invalidGrant("The authorization code is not valid.");
  }
  const codeHash = sha256Hex(code);
  // RFC 6749 §4.1.3: "ensure that the authorization code was issued to the authenticated confidential client".
  if (!row || row.clientId !== client.id) throw invalidGrant("The authorization code is not valid.");
  if (row.grantRevokedAt) throw invalidGrant("The owner disconnected the app; authorize again.");
  if (row.businessMovingSince !== null) throw businessMoving();
  if (row.code.usedAt) return refuseReplayedCode(deps, codeHash, now);
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
  const resource = tokenResource(form, deps.baseUrl, row.code.resource);

  const { statements, response } = tokenPair(deps, { grantId: row.code.grantId, codeHash, resource }, now);
  try {
    await db.batch([
      db
        .update(oauthCodes)
        .set({ usedAt: iso(now) })
        .where(and(eq(oauthCodes.codeHash, codeHash), isNull(oauthCodes.usedAt))),
      previousStatementChangedOneRow(deps),
      ...statements,
    ]);
  } catch (error) {
    // Another redemption (or the owner's disconnection) marked the code used between our read and this batch.
    if (isGuardAbort(error)) return refuseReplayedCode(deps, codeHash, now);
    throw error;
  }
  return response;
}
