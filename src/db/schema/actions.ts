import { sql } from "drizzle-orm";
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { businesses } from "./businesses";
import { createdAt, flag, previousSecretColumns, principalColumns, shardId, timestamp } from "./columns";
import { mcpServers } from "./mcp-servers";

export type ActionParameters = {
  type: "object";
  properties: Record<
    string,
    { type: "string" | "number" | "integer" | "boolean"; description: string; enum?: (string | number | boolean)[] }
  >;
  required?: string[];
};

export const actions = sqliteTable(
  "actions",
  {
    id: shardId("actions"),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    title: text("title").notNull(),
    description: text("description").notNull(),
    url: text("url").notNull(),
    parameters: text("parameters", { mode: "json" }).$type<ActionParameters>().notNull(),
    /** Kept in clear: it keys the HMAC of every call. Shown to the partner once. */
    secret: text("secret").notNull(),
    ...previousSecretColumns(),
    enabled: flag("enabled").notNull().default(false),
    /**
     * Why an action that was on is off: the owner switched it off, or a partner's PATCH with a new url did
     * (docs/guides/connected-actions.md, Changing an action), or its tool left its MCP server (`removed`) or no longer fits an action (`unusable`). Null while
     * on, and for an action never switched on. The owner's overview lists the second kind and the never-approved
     * ones, not the first.
     */
    offReason: text("off_reason", { enum: ["owner", "changed", "removed", "unusable"] }),
    /**
     * The description and parameters the owner approved, which the Secretary uses (docs/decisions.md, Changes to a
     * switched-on action): set when the owner switches the action on or accepts a change, null while it is off. A
     * partner's PATCH of `description` or `parameters` changes the two columns above and leaves these.
     */
    approvedDescription: text("approved_description"),
    approvedParameters: text("approved_parameters", { mode: "json" }).$type<ActionParameters>(),
    ...principalColumns(),
    /**
     * The MCP server the action is a tool of (docs/guides/connected-actions.md, From an MCP server), null for an action
     * registered on its own: its calls are the server's `tools/call`, its definition comes from the server's listing.
     */
    mcpServerId: integer("mcp_server_id").references(() => mcpServers.id, { onDelete: "cascade" }),
    failureCount: integer("failure_count").notNull().default(0),
    lastCalledAt: timestamp("last_called_at"),
    lastSuccessAt: timestamp("last_success_at"),
    lastFailureAt: timestamp("last_failure_at"),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at").notNull(),
  },
  (t) => [
    uniqueIndex("actions_business_name").on(t.businessId, t.name),
    // The owner side, as for webhook endpoints: the app connection, or the API keys when `oauth_grant_id` is null.
    index("actions_business_side").on(t.businessId, t.oauthGrantId),
    // A server's tools, read by its refresh and removed with it.
    index("actions_mcp_server").on(t.mcpServerId),
  ],
);

/**
 * `pending` while a call is under way; then an outcome of its history (docs/guides/connected-actions.md, The call
 * history).
 */
export const ACTION_CALL_STATUSES = ["pending", "success", "timeout", "error", "rejected"] as const;

export const actionCalls = sqliteTable(
  "action_calls",
  {
    id: shardId("action_calls"),
    actionId: integer("action_id")
      .notNull()
      .references(() => actions.id, { onDelete: "cascade" }),
    businessId: text("business_id").notNull(),
    conversationId: text("conversation_id").notNull(),
    messageId: text("message_id").notNull(),
    channel: text("channel").notNull(),
    status: text("status", { enum: ACTION_CALL_STATUSES }).notNull(),
    arguments: text("arguments", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    httpStatus: integer("http_status"),
    error: text("error"),
    durationMs: integer("duration_ms"),
    createdAt: createdAt(),
    /**
     * Set once the call is no longer among its action's 10 most recent (`GET /actions/{id}` shows those), by the
     * trigger `action_calls_supersede` of migration 0008 as each newer call is inserted; only such calls may go after
     * 30 days.
     */
    superseded: flag("superseded").notNull().default(false),
  },
  (t) => [
    index("action_calls_action").on(t.actionId, t.id),
    // At most 2 calls per customer message (docs/guides/connected-actions.md, The answer rules), counted with this
    // index.
    index("action_calls_business_message").on(t.businessId, t.messageId),
    // Retention (docs/decisions.md, Operations): the superseded calls past 30 days are one range. The calls kept as
    // their action's 10 most recent are not in it, so no run reads them however long their action stays idle.
    index("action_calls_superseded_created").on(t.createdAt).where(sql`${t.superseded} = 1`),
  ],
);
