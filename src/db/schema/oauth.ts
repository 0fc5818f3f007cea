import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { businesses } from "./businesses";
import { createdAt, shardId, timestamp } from "./columns";

export const TOKEN_ENDPOINT_AUTH_METHODS = ["client_secret_post", "client_secret_basic", "none"] as const;

export const oauthClients = sqliteTable(
  "oauth_clients",
  {
    id: text("id").primaryKey(),
    clientName: text("client_name").notNull(),
    redirectUris: text("redirect_uris", { mode: "json" }).$type<string[]>().notNull(),
    tokenEndpointAuthMethod: text("token_endpoint_auth_method", { enum: TOKEN_ENDPOINT_AUTH_METHODS }).notNull(),
    /** SHA-256 of the client secret, for the two secret methods; null for public clients. */
    secretHash: text("secret_hash"),
    /**
     * The secret a rotation replaced, which authenticates beside the new one until `previous_secret_expires_at`
     * (docs/oauth.md, Managing your app); only the newest previous secret is kept.
     */
    previousSecretHash: text("previous_secret_hash"),
    previousSecretExpiresAt: timestamp("previous_secret_expires_at"),
    /** SHA-256 of the registration access token (RFC 7592 §3); null for a client registered before management. */
    registrationTokenHash: text("registration_token_hash"),
    /**
     * Raised by each change of the registration (update, rotation, deletion): a shard's copy takes a change only over
     * an older revision, so copies written out of order end as the newest (domain/oauth/client-copies.ts).
     */
    revision: integer("revision").notNull().default(0),
    /** When the client deleted itself (RFC 7592 §2.3): unknown from then on; the row stays for its connections. */
    deletedAt: timestamp("deleted_at"),
    createdAt: createdAt(),
    /**
     * When an owner first approved the client; never cleared, so a client stays "used" when its connections end.
     * A client still without one 24 hours after registration is removed (domain/oauth/client-cleanup.ts).
     */
    firstApprovedAt: timestamp("first_approved_at"),
    /**
     * A client whose id is the URL of its metadata document (docs/oauth.md, Client ID metadata documents): when the
     * document was last read, and until when that reading is fresh by its caching headers; null for a registered one.
     */
    metadataFetchedAt: timestamp("metadata_fetched_at"),
    metadataFreshUntil: timestamp("metadata_fresh_until"),
  },
  // Exactly the clients the cleanup looks for, in registration order: its query, and the count of the registration
  // ceiling (domain/oauth/clients.ts), are range scans of this index.
  (t) => [index("oauth_clients_unapproved").on(t.createdAt).where(sql`${t.firstApprovedAt} is null`)],
);

/**
 * An app connection: one client approved by the owner of one business, at most one row per (client, business)
 * (docs/decisions.md, OAuth). Disconnecting sets `revoked_at`; a later approval of the same client by the same
 * business reactivates the row, so the app finds its intakes again (still off).
 */
export const oauthGrants = sqliteTable(
  "oauth_grants",
  {
    id: shardId("oauth_grants"),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    scope: text("scope").notNull(),
    createdAt: createdAt(),
    revokedAt: timestamp("revoked_at"),
    /** When a request last used one of the connection's tokens, recorded at most once an hour (the owner's overview). */
    lastUsedAt: timestamp("last_used_at"),
  },
  (t) => [
    index("oauth_grants_business").on(t.businessId, t.revokedAt),
    uniqueIndex("oauth_grants_client_business").on(t.clientId, t.businessId),
  ],
);

export const oauthCodes = sqliteTable(
  "oauth_codes",
  {
    /** SHA-256 of the code. */
    codeHash: text("code_hash").primaryKey(),
    grantId: integer("grant_id")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
    redirectUri: text("redirect_uri").notNull(),
    codeChallenge: text("code_challenge").notNull(),
    /** RFC 8707: the resource the client named (this API's identifier), which its tokens are bound to; null if none. */
    resource: text("resource"),
    expiresAt: timestamp("expires_at").notNull(),
    /** Set atomically on redemption (`UPDATE ... WHERE used_at IS NULL`): a code is single use. */
    usedAt: timestamp("used_at"),
    createdAt: createdAt(),
  },
  // Retention (docs/decisions.md, Operations): the expired codes are one range of `oauth_codes_expires`.
  (t) => [index("oauth_codes_grant").on(t.grantId), index("oauth_codes_expires").on(t.expiresAt)],
);

export const TOKEN_KINDS = ["access", "refresh"] as const;

export const oauthTokens = sqliteTable(
  "oauth_tokens",
  {
    /** SHA-256 of the token. */
    tokenHash: text("token_hash").primaryKey(),
    kind: text("kind", { enum: TOKEN_KINDS }).notNull(),
    grantId: integer("grant_id")
      .notNull()
      .references(() => oauthGrants.id, { onDelete: "cascade" }),
    /** The code the token family was issued from, so that a replayed code can revoke what it issued. */
    codeHash: text("code_hash"),
    /**
     * RFC 8707: the resource the token is bound to, or null (unbound). /api/v1 accepts an access token bound to its own
     * identifier or to none (docs/oauth.md, Finding the authorization server).
     */
    resource: text("resource"),
    expiresAt: timestamp("expires_at").notNull(),
    /**
     * Refresh tokens: set once, when rotated out; the token is refused from then on. Presented again within 5 seconds
     * of this it is only refused (docs/oauth.md); later, it revokes the grant's tokens (RFC 9700 §4.14.2).
     */
    rotatedAt: timestamp("rotated_at"),
    revokedAt: timestamp("revoked_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("oauth_tokens_grant").on(t.grantId),
    index("oauth_tokens_code").on(t.codeHash),
    // Retention (docs/decisions.md, Operations): tokens expired, or revoked, 90 days ago are two ranges; only revoked
    // tokens are in the second index, so issuing a token does not write it.
    index("oauth_tokens_expires").on(t.expiresAt),
    index("oauth_tokens_revoked").on(t.revokedAt).where(sql`${t.revokedAt} is not null`),
  ],
);
