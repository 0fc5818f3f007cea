import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { createdAt, shardId } from "./columns";
import { oauthClients } from "./oauth";

/**
 * An app's own webhook endpoint (docs/guides/webhooks.md, Subscribing once as an app): one subscription for every
 * business connected to the app, kept in the global database beside the client. Each connected business holds a copy
 * of it among its own endpoints (`webhook_endpoints.app_endpoint_id`), on the app connection's side, which its events
 * are delivered to as to any endpoint of that side.
 */
export const appEndpoints = sqliteTable(
  "app_endpoints",
  {
    id: shardId("app_endpoints"),
    clientId: text("client_id")
      .notNull()
      .references(() => oauthClients.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    events: text("events", { mode: "json" }).$type<string[]>().notNull(),
    description: text("description").notNull(),
    /** Kept in clear: it keys the HMAC of every delivery of every copy. Shown to the app once. */
    secret: text("secret").notNull(),
    createdAt: createdAt(),
  },
  (t) => [index("app_endpoints_client").on(t.clientId)],
);
