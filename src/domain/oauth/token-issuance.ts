import { type SQL, sql } from "drizzle-orm";
import { businesses, oauthGrants, oauthTokens } from "../../db/schema";
import { shardSegment } from "../../db/shards";
import { guard } from "../../db/snapshot-guard";
import type { Dependencies } from "../../dependencies";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { API_SCOPE, type TokenResponse } from "../../schemas/oauth";
import { ACCESS_TOKEN_PREFIX, REFRESH_TOKEN_PREFIX } from "./token-format";

/*
 * Issuing a connection's tokens: their lifetimes, the pair that both grants give (the code exchange and the refresh
 * rotation), and the guard that makes either single use.
 */

/** An access token lives 1 hour (docs/guides/oauth.md, 5. Refresh). */
export const ACCESS_TOKEN_LIFETIME_SECONDS = 3600;
/**
 * A refresh token unused for 90 days expires (docs/guides/oauth.md, 5. Refresh); each rotation starts a new 90 days.
 */
export const REFRESH_TOKEN_LIFETIME_MS = 90 * 24 * 60 * 60 * 1000;

const plusSeconds = (now: EpochMs, seconds: number) => iso(now + seconds * 1000);

/**
 * A new access + refresh token pair of a connection, bound to `resource` or to none (RFC 8707; protected-resource.ts),
 * as insert statements and the response that names them.
 */
export function tokenPair(
  deps: Dependencies,
  grant: { grantId: number | SQL; codeHash: string | SQL | null; resource: string | null },
  now: EpochMs,
) {
  const { db } = deps;
  // Each names the connection's shard (src/db/shards.ts), so a request finds its database from the token alone.
  const accessToken = randomToken(ACCESS_TOKEN_PREFIX + shardSegment(deps.shard));
  const refreshToken = randomToken(REFRESH_TOKEN_PREFIX + shardSegment(deps.shard));
  const createdAt = iso(now);
  const statements = [
    db.insert(oauthTokens).values({
      tokenHash: sha256Hex(accessToken),
      kind: "access",
      ...grant,
      expiresAt: plusSeconds(now, ACCESS_TOKEN_LIFETIME_SECONDS),
      createdAt,
    }),
    db.insert(oauthTokens).values({
      tokenHash: sha256Hex(refreshToken),
      kind: "refresh",
      ...grant,
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

/**
 * The connection's columns that the read of a code or refresh token selects with it. Its `revoked_at` has a name of
 * its own: D1's batch answers rows as objects, where it would collapse with the token's `revoked_at` and shift every
 * value after it (docs/decisions.md, D1's batch answers rows as objects).
 */
export const connectionColumns = {
  clientId: oauthGrants.clientId,
  grantRevokedAt: sql<string | null>`${oauthGrants.revokedAt}`.mapWith(oauthGrants.revokedAt).as("grant_revoked_at"),
  // Read with the code or token, in its one statement: while the business moves, no token is issued or rotated.
  businessMovingSince: sql<
    string | null
  >`(select ${businesses.movingSince} from ${businesses} where ${businesses.id} = ${oauthGrants.businessId})`.as(
    "business_moving_since",
  ),
};

/** The batch's previous statement changed exactly one row (SQLite's `changes()`), or the batch aborts. */
export const previousStatementChangedOneRow = (deps: Dependencies) => guard(deps.db, sql`changes() = 1`);
