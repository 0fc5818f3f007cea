import { and, eq, gt, isNull, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "../../db/client";
import { apiKeys, oauthGrants, oauthTokens } from "../../db/schema";
import { argumentShape, type ShapedArgument } from "../../db/statements";
import { type EpochMs, iso } from "../../lib/time";
import type { Credential, Principal } from "./principals";

/** An id known already, or a sub-select that finds it inside the statement that uses it. */
export type ScopeValue<T> = T | SQLWrapper;

/**
 * Whose records a query may touch (docs/architecture.md, Principals and owner sides): the business, and the principal,
 * for the records that belong to one key or one app (exactly one of `apiKeyId` and `oauthGrantId` is set). A write's
 * scope holds the ids of the principal it authenticated first; a read's holds sub-selects on the credential's hash, so
 * that the read goes in the same D1 batch as the authentication (docs/architecture.md, Performance budget). The
 * sub-selects find only a credential that is accepted, so for a refused one they are NULL and the read selects nothing.
 */
export type Scope = {
  businessId: ScopeValue<string>;
  apiKeyId: ScopeValue<number> | null;
  oauthGrantId: ScopeValue<number> | null;
};

/** A principal's scope by its ids: the scope of a write, which authenticated its principal first. */
export type PrincipalScope = { businessId: string; apiKeyId: number | null; oauthGrantId: number | null };

export function scopeOf(principal: Principal): PrincipalScope {
  return principal.kind === "api_key"
    ? { businessId: principal.business.id, apiKeyId: principal.apiKeyId, oauthGrantId: null }
    : { businessId: principal.business.id, apiKeyId: null, oauthGrantId: principal.grantId };
}

/**
 * A partner read's scope while its credential is looked up in the same D1 batch (docs/architecture.md, Performance
 * budget): the credential itself, which the read's statements find by sub-selects on its hash.
 */
export type CredentialScope = { credential: Credential; now: EpochMs };

/** Whose records a read reaches: a principal's side or a credential's, or (a business id) the owner's: every side. */
export type PartnerReach = PrincipalScope | CredentialScope;
export type ReadReach = string | PartnerReach;

/**
 * A read's reach as a statement argument (src/db/statements.ts): its shape, and the values of the placeholders its
 * SQL is rendered with once per shape. The credential's sub-selects find only a credential that is accepted, so for
 * a refused one they are NULL and the read selects nothing.
 */
export const reachArgument = (reach: ReadReach): ShapedArgument<Reach> =>
  typeof reach === "string" ? ownerReach({ business: reach }) : sideArgument(reach);

/** A partner's side as a statement argument: see `reachArgument`. */
export function sideArgument(reach: PartnerReach): ShapedArgument<Scope> {
  if ("credential" in reach) {
    const { kind, hash } = reach.credential;
    return kind === "api_key"
      ? apiKeySide({ credential: hash })
      : accessTokenSide({ credential: hash, now: iso(reach.now) });
  }
  return reach.apiKeyId === null
    ? appSide({ business: reach.businessId, grant: reach.oauthGrantId })
    : keySide({ business: reach.businessId, apiKey: reach.apiKeyId });
}

/* The kinds of reach, declared once (src/db/statements.ts, argumentShape): each renders from placeholders only. */
const ownerReach = argumentShape("owner", ["business"], (_, { business }): Reach => business);
const appSide = argumentShape(
  "app",
  ["business", "grant"],
  (_, { business, grant }): Scope => ({
    businessId: business,
    apiKeyId: null,
    oauthGrantId: grant,
  }),
);
const keySide = argumentShape(
  "key",
  ["business", "apiKey"],
  (_, { business, apiKey }): Scope => ({
    businessId: business,
    apiKeyId: apiKey,
    oauthGrantId: null,
  }),
);
const apiKeySide = argumentShape("api_key", ["credential"], (db) => credentialScope(db, "api_key"));
const accessTokenSide = argumentShape("access_token", ["credential", "now"], (db) =>
  credentialScope(db, "access_token"),
);

/** The scope of a credential's placeholders (`credential`: its hash, `now` for a token's expiry). */
function credentialScope(db: Database, kind: Credential["kind"]): Scope {
  const hash = sql.placeholder("credential");
  if (kind === "api_key") {
    const activeKey = and(eq(apiKeys.keyHash, hash), isNull(apiKeys.revokedAt));
    return {
      businessId: db.select({ id: apiKeys.businessId }).from(apiKeys).where(activeKey),
      apiKeyId: db.select({ id: apiKeys.id }).from(apiKeys).where(activeKey),
      oauthGrantId: null,
    };
  }
  // The token's connection, found as authenticateWith finds it, and only while the token is accepted.
  const ofAcceptedToken = <T extends typeof oauthGrants.id | typeof oauthGrants.businessId>(column: T) =>
    db
      .select({ id: column })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .where(
        and(
          eq(oauthTokens.tokenHash, hash),
          eq(oauthTokens.kind, "access"),
          isNull(oauthTokens.revokedAt),
          gt(oauthTokens.expiresAt, sql.placeholder("now")),
          isNull(oauthGrants.revokedAt),
        ),
      );
  return {
    businessId: ofAcceptedToken(oauthGrants.businessId),
    apiKeyId: null,
    oauthGrantId: ofAcceptedToken(oauthGrants.id),
  };
}

type SidedTable = { businessId: SQLiteColumn; oauthGrantId: SQLiteColumn };

/**
 * The records of the scope's owner side (docs/architecture.md, Principals and owner sides): those its app connection
 * created, or, for an API key, those the business's keys created together (`oauth_grant_id` null). Another side's
 * record is the same 404 as a missing one. Served by the (business_id, oauth_grant_id) indexes.
 */
export const onSide = (table: SidedTable, scope: Scope): SQL | undefined =>
  and(
    eq(table.businessId, scope.businessId),
    scope.oauthGrantId === null ? isNull(table.oauthGrantId) : eq(table.oauthGrantId, scope.oauthGrantId),
  );

/**
 * Whose records a statement reaches, as it is rendered: a business id is the owner's reach (the dashboard: every side
 * of the business); a scope is a partner's (its own side only).
 */
export type Reach = ScopeValue<string> | Scope;

const isScope = (reach: Reach): reach is Scope => typeof reach === "object" && "oauthGrantId" in reach;

/** The business of a reach as rendered (the reads of a business's bookings, orders and knowledge). */
export const businessOf = (reach: Reach): ScopeValue<string> => (isScope(reach) ? reach.businessId : reach);

export const reached = (table: SidedTable, reach: Reach): SQL | undefined =>
  isScope(reach) ? onSide(table, reach) : eq(table.businessId, reach);
