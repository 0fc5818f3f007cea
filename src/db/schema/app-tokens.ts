import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, timestamp } from "./columns";
import { oauthClients } from "./oauth";

/**
 * An app's access token as itself (RFC 6749 §4.4, client credentials; docs/oauth.md, The app as itself): for what
 * spans the businesses connected to it, so it lives in the global database beside the client, and names no business.
 */
export const appTokens = sqliteTable(
  "app_tokens",
  {
    /** SHA-256 of the token. */
    tokenHash: text("token_hash").primaryKey(),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    /** The resource the token is bound to (RFC 8707), null when the client named none. */
    resource: text("resource"),
    expiresAt: timestamp("expires_at").notNull(),
    revokedAt: timestamp("revoked_at"),
    createdAt: createdAt(),
  },
  // Retention (docs/decisions.md, Operations): expired tokens are one range.
  (t) => [index("app_tokens_expires").on(t.expiresAt), index("app_tokens_client").on(t.clientId)],
);
