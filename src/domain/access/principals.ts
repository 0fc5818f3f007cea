import { eq, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { apiKeys, businesses, oauthGrants, oauthTokens } from "../../db/schema";
import { type ShardName, shardOfSecret } from "../../db/shards";
import { type Bound, runStatements, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { unauthorized } from "../../lib/api-error";
import { sha256HexNative } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { apiResource } from "../oauth/discovery";
import { ACCESS_TOKEN_PREFIX } from "../oauth/token-format";
import { API_KEY_PREFIX, TEST_API_KEY_PREFIX } from "./api-key-format";
import type { Business } from "./businesses";
import { forwardedShard, forwardLookup } from "./credential-forwards";

/**
 * Who makes a partner request (docs/architecture.md, Principals and owner sides): an API key, or an OAuth app
 * connection (one client approved by the owner of one business). Every partner query is scoped by `business.id`;
 * intakes belong to the principal itself.
 */
export type Principal = (
  | { kind: "api_key"; apiKeyId: number; business: Business }
  | { kind: "oauth_app"; grantId: number; clientId: string; business: Business }
) & {
  /** When the credential (the key, or the app connection) was last recorded as used: the owner's overview. */
  lastUsedAt: string | null;
};

export { API_KEY_PREFIX };

/**
 * A partner credential as the request presents it, recognised by its shape before any query (API keys and access
 * tokens never share a lookup) and found later by its SHA-256 in the shard it names (src/db/shards.ts).
 */
export type Credential =
  | { kind: "api_key"; hash: string; shard: ShardName; test: boolean }
  | { kind: "access_token"; hash: string; shard: ShardName };

/**
 * A missing, malformed or revoked credential is a 401, and an access token works exactly as an API key
 * (docs/guides/oauth.md, 4. Call the API). A missing or malformed one is refused here, before any query.
 */
export async function readCredential(authorization: string | undefined): Promise<Credential> {
  if (!authorization) {
    throw unauthorized(
      "An API key is required: send the header Authorization: Bearer <API key>.",
      "authentication_required",
    );
  }
  // RFC 6750 §2.1: the scheme, then one b64token. A header of that form carries a credential, which is recognised or
  // not (a shape the service never issues is not recognised); only another form is malformed.
  const credential = /^Bearer +([\w\-.~+/]+=*)$/i.exec(authorization.trim())?.[1];
  if (!credential) {
    throw unauthorized(
      "The Authorization header is malformed: it must be Bearer followed by an API key or an access token.",
    );
  }
  const tokenShard = shardOfSecret(ACCESS_TOKEN_PREFIX, credential);
  if (tokenShard) return { kind: "access_token", hash: await sha256HexNative(credential), shard: tokenShard };
  const liveShard = shardOfSecret(API_KEY_PREFIX, credential);
  const keyShard = liveShard ?? shardOfSecret(TEST_API_KEY_PREFIX, credential);
  if (!keyShard) {
    throw credential.startsWith(ACCESS_TOKEN_PREFIX)
      ? invalidToken("The access token is not recognised.")
      : unauthorized("The API key is not recognised.");
  }
  return { kind: "api_key", hash: await sha256HexNative(credential), shard: keyShard, test: !liveShard };
}

/**
 * A column under a name of its own: D1's batch answers rows as objects, so two selected columns of one name (the
 * joined tables' `id`s) would collapse into one and shift every value after them.
 */
const renamed = <T extends SQLiteColumn>(column: T, name: string) =>
  sql<T["_"]["data"] | (T["_"]["notNull"] extends true ? never : null)>`${column}`.mapWith(column).as(name);

/** An API key by its hash's unique index, joined with its business: two rows read. */
const keyLookup = statement<{ credential: string }>()((db, { credential }) =>
  db
    .select({
      apiKeyId: renamed(apiKeys.id, "api_key_id"),
      revokedAt: apiKeys.revokedAt,
      lastUsedAt: apiKeys.lastUsedAt,
      business: businesses,
    })
    .from(apiKeys)
    .innerJoin(businesses, eq(businesses.id, apiKeys.businessId))
    .where(eq(apiKeys.keyHash, credential)),
);

/** An OAuth access token by its hash (primary key), joined with its connection and business: three rows read. */
const tokenLookup = statement<{ credential: string }>()((db, { credential }) =>
  db
    .select({
      kind: oauthTokens.kind,
      resource: oauthTokens.resource,
      expiresAt: oauthTokens.expiresAt,
      revokedAt: oauthTokens.revokedAt,
      grantId: renamed(oauthGrants.id, "grant_id"),
      clientId: oauthGrants.clientId,
      disconnectedAt: renamed(oauthGrants.revokedAt, "disconnected_at"),
      lastUsedAt: oauthGrants.lastUsedAt,
      business: businesses,
    })
    .from(oauthTokens)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
    .innerJoin(businesses, eq(businesses.id, oauthGrants.businessId))
    .where(eq(oauthTokens.tokenHash, credential)),
);

type RowOf<S> = S extends (args: never) => Bound<(infer R)[]> ? R : never;
type KeyRow = RowOf<typeof keyLookup>;
type TokenRow = RowOf<typeof tokenLookup>;

/** RFC 6750 §3.1: a token that is expired, revoked, unknown or for another resource is `invalid_token`. */
const invalidToken = (message: string) => unauthorized(message, "invalid_credential", "invalid_token");

/**
 * A key is refused where it does not belong: a test key anywhere but on a sandbox business, a live key on one
 * (docs/guides/sandbox.md). The key's kind is in its prefix, and a key is found by the hash of all of it, so this only
 * refuses a key that was made for the other kind of business.
 */
function keyPrincipal(row: KeyRow | undefined, test: boolean): Principal {
  if (!row) throw unauthorized("The API key is not recognised.");
  if (row.revokedAt) throw unauthorized("The API key has been revoked.");
  if (test !== row.business.sandbox) {
    throw unauthorized(
      test
        ? "A test key (sk_test_…) works only on a sandbox business."
        : "A sandbox business takes test keys (sk_test_…) only.",
    );
  }
  return { kind: "api_key", apiKeyId: row.apiKeyId, business: row.business, lastUsedAt: row.lastUsedAt };
}

/**
 * An access token is refused when unknown, bound to another resource than this API (RFC 8707; docs/oauth.md, Finding
 * the authorization server), expired (1 hour), revoked (revocation endpoint, reuse detection, code replay) or when the
 * owner disconnected the app: each stops it at once, since nothing is cached.
 */
function tokenPrincipal(row: TokenRow | undefined, now: EpochMs, resource: string): Principal {
  if (row?.kind !== "access") throw invalidToken("The access token is not recognised.");
  if (row.resource !== null && row.resource !== resource) {
    throw invalidToken(`The access token is for another resource: ask for one for this API, ${resource}.`);
  }
  if (row.disconnectedAt) throw invalidToken("The access token has been revoked: the owner disconnected the app.");
  if (row.revokedAt) throw invalidToken("The access token has been revoked.");
  if (row.expiresAt <= iso(now)) throw invalidToken("The access token has expired: refresh it.");
  return {
    kind: "oauth_app",
    grantId: row.grantId,
    clientId: row.clientId,
    business: row.business,
    lastUsedAt: row.lastUsedAt,
  };
}

/**
 * The credential's principal and the results of `statements`, in one D1 batch: one round trip (docs/architecture.md,
 * Performance budget). The statements are scoped by the credential's `reachArgument`, so a refused credential selects
 * nothing; the refusal is thrown before anyone sees their results all the same. A credential not found in the shard
 * it names, whose business moved, is found through its forward, read in the same batch: the batch runs again on the
 * business's shard (credential-forwards.ts), and the answer's `deps` are that shard's, for the rest of the request.
 */
export async function authenticateWith(
  deps: Dependencies,
  credential: Credential,
  statements: Bound<unknown>[],
  now: EpochMs = deps.clock(),
): Promise<{ principal: Principal; results: unknown[]; deps: Dependencies }> {
  const lookup =
    credential.kind === "api_key"
      ? keyLookup({ credential: credential.hash })
      : tokenLookup({ credential: credential.hash });
  const [rows, forwards, ...results] = await runStatements(deps.db, [
    lookup,
    forwardLookup({ credential: credential.hash }),
    ...statements,
  ]);
  const row = (rows as (KeyRow | TokenRow)[])[0];
  const forward = row ? undefined : forwardedShard(forwards);
  // A forward never names the shard it is in; a business moved twice is followed through each shard it left.
  if (forward !== undefined && forward !== deps.shard) {
    return authenticateWith(deps.onShard(forward), credential, statements, now);
  }
  const principal =
    credential.kind === "api_key"
      ? keyPrincipal(row as KeyRow | undefined, credential.test)
      : tokenPrincipal(row as TokenRow | undefined, now, apiResource(deps.baseUrl));
  return { principal, results, deps };
}

/** The principal of an `Authorization` header, alone: one indexed lookup. */
export async function authenticatePartner(deps: Dependencies, authorization: string | undefined): Promise<Principal> {
  return (await authenticateWith(deps, await readCredential(authorization), [])).principal;
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
