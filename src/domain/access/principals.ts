import { eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { apiKeys, businesses, oauthGrants, oauthTokens } from "../../db/schema";
import { ApiError, unauthorized } from "../../lib/errors";
import { sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import sharedConstants from "../../shared-constants.json";
import { ACCESS_TOKEN_PATTERN } from "../oauth/token-format";
import type { Business } from "./businesses";

/**
 * Who makes a partner request (DESIGN.md, Principals and ownership): an API key, or an OAuth app connection (one
 * client approved by the owner of one business). Every partner query is scoped by `business.id`; intakes belong to
 * the principal itself.
 */
export type Principal =
  | { kind: "api_key"; apiKeyId: number; business: Business }
  | { kind: "oauth_app"; grantId: number; clientId: string; business: Business };

/** `sk_live_` + 32 random bytes in base64url (DESIGN.md, API key format). */
export const API_KEY_PREFIX = sharedConstants.API_KEY_PREFIX;
const API_KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[A-Za-z0-9_-]{43}$`);

/**
 * Spec, Authentication: "A missing, malformed or revoked key returns 401", and "The access token is used exactly
 * like an API key". A malformed credential is refused before any query; a well-formed one is recognised by its
 * prefix and costs one indexed lookup by its SHA-256, joined with its business (and, for a token, its connection).
 * API keys and access tokens never share a lookup.
 */
export async function authenticatePartner(db: Database, authorization: string | undefined): Promise<Principal> {
  if (!authorization) {
    throw unauthorized("An API key is required: send the header Authorization: Bearer <API key>.");
  }
  const match = /^Bearer +(\S+)$/i.exec(authorization.trim());
  const credential = match?.[1];
  if (credential && ACCESS_TOKEN_PATTERN.test(credential)) return authenticateAccessToken(db, credential);
  if (!credential || !API_KEY_PATTERN.test(credential)) {
    throw unauthorized(
      "The Authorization header is malformed: it must be Bearer followed by an API key or an access token.",
    );
  }
  const row = await db
    .select({ apiKeyId: apiKeys.id, revokedAt: apiKeys.revokedAt, business: businesses })
    .from(apiKeys)
    .innerJoin(businesses, eq(businesses.id, apiKeys.businessId))
    .where(eq(apiKeys.keyHash, sha256Hex(credential)))
    .get();
  if (!row) throw unauthorized("The API key is not recognised.");
  if (row.revokedAt) throw unauthorized("The API key has been revoked.");
  return { kind: "api_key", apiKeyId: row.apiKeyId, business: row.business };
}

/** RFC 6750 §3.1: a token that is expired, revoked or unknown is `invalid_token`. */
const invalidToken = (message: string) =>
  new ApiError(401, message, { headers: { "WWW-Authenticate": 'Bearer realm="api", error="invalid_token"' } });

/**
 * An OAuth access token (spec: OAuth artefacts): found by its SHA-256 (primary key) joined with its connection and
 * business in one query, three rows read. Refused when unknown, expired (1 hour), revoked (revocation endpoint,
 * reuse detection, code replay) or when the owner disconnected the app: each stops it at once, since nothing is
 * cached.
 */
async function authenticateAccessToken(db: Database, token: string, now: EpochMs = Date.now()): Promise<Principal> {
  const row = await db
    .select({
      kind: oauthTokens.kind,
      expiresAt: oauthTokens.expiresAt,
      revokedAt: oauthTokens.revokedAt,
      grantId: oauthGrants.id,
      clientId: oauthGrants.clientId,
      disconnectedAt: oauthGrants.revokedAt,
      business: businesses,
    })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .innerJoin(businesses, eq(businesses.id, oauthGrants.businessId))
    .where(eq(oauthTokens.tokenHash, sha256Hex(token)))
    .get();
  if (row?.kind !== "access") throw invalidToken("The access token is not recognised.");
  if (row.disconnectedAt) throw invalidToken("The access token has been revoked: the owner disconnected the app.");
  if (row.revokedAt) throw invalidToken("The access token has been revoked.");
  if (row.expiresAt <= iso(now)) throw invalidToken("The access token has expired: refresh it.");
  return { kind: "oauth_app", grantId: row.grantId, clientId: row.clientId, business: row.business };
}

/** One string per credential, for per-principal budgets (the rate limit). */
export const principalKey = (principal: Principal): string =>
  principal.kind === "api_key" ? `api_key:${principal.apiKeyId}` : `oauth_app:${principal.grantId}`;

/** The principal's columns on the records it creates (exactly one is set). */
export type PrincipalRef = { apiKeyId: number | null; oauthGrantId: number | null };

export function principalRef(principal: Principal): PrincipalRef {
  return principal.kind === "api_key"
    ? { apiKeyId: principal.apiKeyId, oauthGrantId: null }
    : { apiKeyId: null, oauthGrantId: principal.grantId };
}

export const samePrincipal = (a: PrincipalRef, b: PrincipalRef) =>
  a.apiKeyId === b.apiKeyId && a.oauthGrantId === b.oauthGrantId;
