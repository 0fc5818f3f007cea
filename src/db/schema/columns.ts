import { integer, text } from "drizzle-orm/sqlite-core";
import { nextId } from "../ids";

/**
 * Timestamps are stored as the API writes them: ISO 8601 UTC with milliseconds, sortable as text (docs/decisions.md,
 * Data model).
 */
export const timestamp = (name: string) => text(name);

export const createdAt = () => timestamp("created_at").notNull();

export const flag = (name: string) => integer(name, { mode: "boolean" });

/**
 * A signing secret's predecessor during a rotation (docs/webhooks.md, Rotating a secret): until it expires, every
 * request carries a signature under each. Null when no rotation is under way.
 */
export const previousSecretColumns = () => ({
  previousSecret: text("previous_secret"),
  previousSecretExpiresAt: timestamp("previous_secret_expires_at"),
});

/**
 * The principal that created a record: exactly one of the two is set. An intake belongs to that key or app alone;
 * an endpoint or an action to its owner side, the app connection or (when `oauth_grant_id` is null) the business's
 * API keys together; a knowledge item names its latest author (docs/architecture.md, Principals and owner sides).
 */
export const principalColumns = () => ({
  apiKeyId: integer("api_key_id"),
  oauthGrantId: integer("oauth_grant_id"),
});

/**
 * A table's id, numbered by the shard that inserts the row from its own sequence (src/db/ids.ts), never by
 * AUTOINCREMENT, which would follow the rows a move copied in from other shards (docs/scaling.md, Ids unique across
 * shards). `AUTOINCREMENT` stays in the table's definition only because SQLite cannot drop it without a rebuild.
 */
export const shardId = (table: string) =>
  integer("id")
    .primaryKey({ autoIncrement: true })
    .$defaultFn(() => nextId(table));
