import { and, eq, gt, isNull, type SQL, type SQLWrapper, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "../../db/client";
import { apiKeys, oauthGrants, oauthTokens } from "../../db/schema";
import { argumentShape, type ShapedArgument } from "../../db/statements";
import { type EpochMs, iso } from "../../lib/time";
import type { Credential, Principal } from "./principals";

/*
 * Whose records a query may touch (docs/architecture.md, One way through a partner request), in two words: a partner's
 * **side** (`Side`: the records of one app connection, or of the business's API keys together; docs/architecture.md,
 * Principals and owner sides), and a **reach** (`Reach`: a side, or a business id for the owner, who reaches every
 * side). Each has a rendered form for the statements that use it (`SqlSide`, `SqlReach`), built by `sideArgument` and
 * `reachArgument`.
 */

/** An id known already, or a sub-select that finds it inside the statement that uses it. */
export type ScopeValue<T> = T | SQLWrapper;

/**
 * A side as a statement sees it: the business, and the principal, for the records that belong to one key or one app
 * (exactly one of `apiKeyId` and `oauthGrantId` is set). A write's side holds the ids of the principal it
 * authenticated first; a read's holds sub-selects on the credential's hash, so that the read goes in the same D1 batch
 * as the authentication (docs/architecture.md, Performance budget). The sub-selects find only a credential that is
 * accepted, so for a refused one they are NULL and the read selects nothing.
 */
export type SqlSide = {
  businessId: ScopeValue<string>;
  apiKeyId: ScopeValue<number> | null;
  oauthGrantId: ScopeValue<number> | null;
};

/** A principal's side by its ids: the side of a write, which authenticated its principal first. */
export type PrincipalSide = { businessId: string; apiKeyId: number | null; oauthGrantId: number | null };

export function sideOf(principal: Principal): PrincipalSide {
  return principal.kind === "api_key"
    ? { businessId: principal.business.id, apiKeyId: principal.apiKeyId, oauthGrantId: null }
    : { businessId: principal.business.id, apiKeyId: null, oauthGrantId: principal.grantId };
}

/**
 * A partner read's side while its credential is looked up in the same D1 batch (docs/architecture.md, Performance
 * budget): the credential itself, which the read's statements find by sub-selects on its hash.
 */
export type CredentialSide = { credential: Credential; now: EpochMs };

/** A partner's side, by its principal or by its credential; a reach is a side, or a business id: the owner's, every side. */
export type Side = PrincipalSide | CredentialSide;
export type Reach = string | Side;

/**
 * A read's reach as a statement argument (src/db/statements.ts): its shape, and the values of the placeholders its
 * SQL is rendered with once per shape. The credential's sub-selects find only a credential that is accepted, so for
 * a refused one they are NULL and the read selects nothing.
 */
export const reachArgument = (reach: Reach): ShapedArgument<SqlReach> =>
  typeof reach === "string" ? ownerReach({ business: reach }) : sideArgument(reach);

/** A partner's side as a statement argument: see `reachArgument`. */
export function sideArgument(reach: Side): ShapedArgument<SqlSide> {
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
const ownerReach = argumentShape("owner", ["business"], (_, { business }): SqlReach => business);
const appSide = argumentShape(
  "app",
  ["business", "grant"],
  (_, { business, grant }): SqlSide => ({
    businessId: business,
    apiKeyId: null,
    oauthGrantId: grant,
  }),
);
const keySide = argumentShape(
  "key",
  ["business", "apiKey"],
  (_, { business, apiKey }): SqlSide => ({
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
function credentialScope(db: Database, kind: Credential["kind"]): SqlSide {
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
 * The records of the side (docs/architecture.md, Principals and owner sides): those its app connection
 * created, or, for an API key, those the business's keys created together (`oauth_grant_id` null). Another side's
 * record is the same 404 as a missing one. Served by the (business_id, oauth_grant_id) indexes.
 */
export const onSide = (table: SidedTable, scope: SqlSide): SQL | undefined =>
  and(
    eq(table.businessId, scope.businessId),
    scope.oauthGrantId === null ? isNull(table.oauthGrantId) : eq(table.oauthGrantId, scope.oauthGrantId),
  );

/**
 * A reach as a statement sees it: a business id is the owner's reach (the dashboard: every side of the business); a
 * side is a partner's (its own side only).
 */
export type SqlReach = ScopeValue<string> | SqlSide;

export const isSqlSide = (reach: SqlReach): reach is SqlSide => typeof reach === "object" && "oauthGrantId" in reach;

/** The business of a reach as rendered (the reads of a business's bookings, orders and knowledge). */
export const businessOf = (reach: SqlReach): ScopeValue<string> => (isSqlSide(reach) ? reach.businessId : reach);

export const reached = (table: SidedTable, reach: SqlReach): SQL | undefined =>
  isSqlSide(reach) ? onSide(table, reach) : eq(table.businessId, reach);
