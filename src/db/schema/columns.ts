import { integer, text } from "drizzle-orm/sqlite-core";

/** Timestamps are stored as the spec writes them: ISO 8601 UTC strings with milliseconds (sortable as text). */
export const timestamp = (name: string) => text(name);

export const createdAt = () => timestamp("created_at").notNull();

export const flag = (name: string) => integer(name, { mode: "boolean" });

/**
 * A signing secret's predecessor during a rotation (DESIGN.md, Beyond the spec: Secret rotation): until it expires,
 * every request carries a signature under each. Null when no rotation is under way.
 */
export const previousSecretColumns = () => ({
  previousSecret: text("previous_secret"),
  previousSecretExpiresAt: timestamp("previous_secret_expires_at"),
});

/**
 * The principal that created a business-wide record (DESIGN.md, Principals and ownership): exactly one of the two
 * is set. Intakes and their deliveries belong to it; endpoints, actions and knowledge only remember it (`source`).
 */
export const principalColumns = () => ({
  apiKeyId: integer("api_key_id"),
  oauthGrantId: integer("oauth_grant_id"),
});
