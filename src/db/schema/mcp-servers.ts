import { index, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { businesses } from "./businesses";
import { createdAt, principalColumns, shardId, timestamp } from "./columns";

/**
 * A tool as the server last listed it (docs/guides/connected-actions.md, From an MCP server): `reason` says why it
 * cannot be a connected action, null when it can; `offered`, that the partner offered it (absent when not).
 */
export type ListedTool = { name: string; reason: string | null; offered?: true };

/** A partner's MCP server, the source of the connected actions that name it (`actions.mcp_server_id`). */
export const mcpServers = sqliteTable(
  "mcp_servers",
  {
    id: shardId("mcp_servers"),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    url: text("url").notNull(),
    /** Kept in clear: it keys the signature of every request to the server. Shown to the partner once. */
    secret: text("secret").notNull(),
    /** The tools of the last listing that answered, in the server's order. */
    tools: text("tools", { mode: "json" }).$type<ListedTool[]>().notNull(),
    /** When the tools were last listed; the scheduled refresh takes the servers listed longest ago. */
    listedAt: timestamp("listed_at").notNull(),
    /** Why the last refresh could not list the tools, null when it could: the tools above are from the one before. */
    listError: text("list_error"),
    ...principalColumns(),
    createdAt: createdAt(),
  },
  (t) => [
    // A partner's list is one range of its side, as for actions and endpoints.
    index("mcp_servers_business_side").on(t.businessId, t.oauthGrantId),
    // The scheduled refresh reads the servers listed longest ago, across the shard's businesses.
    index("mcp_servers_listed").on(t.listedAt),
  ],
);
