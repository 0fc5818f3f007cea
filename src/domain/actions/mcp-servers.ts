import { and, asc, eq, inArray } from "drizzle-orm";
import { readTwo } from "../../db/reads";
import { actions, mcpServers } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { notFound } from "../../lib/api-error";
import { type Reach, reachArgument, reached, type SqlReach } from "../access/scope";

/*
 * A partner's MCP servers as they are answered, each with its tools and what became of them
 * (docs/guides/connected-actions.md, From an MCP server), read within a reach as actions are.
 */

export type McpServer = typeof mcpServers.$inferSelect;

/** What a server's answer says of each of its actions. */
export type ServerAction = Pick<
  typeof actions.$inferSelect,
  "id" | "name" | "enabled" | "offReason" | "mcpServerId" | "createdAt"
>;

export const mcpServerNotFound = () => notFound("No MCP server with that id exists for this business.");

/** Sentences of a tool that is not a connected action, or of one whose action is off for its server's sake. */
export const NOT_OFFERED = "Not offered: the partner did not offer this tool.";
export const NO_LONGER_LISTED = "The server no longer lists this tool: its action is off.";
export const OFFERED_WITHOUT_ROOM =
  "Offered, but not an action: the business had no room for it, or another action has its name.";

/**
 * Each tool of the last listing, in the server's order, then the actions whose tool the server no longer lists:
 * `actionId` when it is a connected action, `reason` when it is not one or its action is off because of the server.
 */
export function toolsOf(server: McpServer, serverActions: ServerAction[]) {
  const byName = new Map(serverActions.map((action) => [action.name, action]));
  const listed = server.tools.map(({ name, reason, offered }) => {
    const action = byName.get(name);
    byName.delete(name);
    return {
      name,
      actionId: action?.id ?? null,
      enabled: action?.enabled ?? false,
      reason: action ? reason : (reason ?? (offered ? OFFERED_WITHOUT_ROOM : NOT_OFFERED)),
    };
  });
  const gone = [...byName.values()].map((action) => ({
    name: action.name,
    actionId: action.id,
    enabled: action.enabled,
    reason: NO_LONGER_LISTED,
  }));
  return [...listed, ...gone];
}

/** The server's members (docs/guides/connected-actions.md, From an MCP server); never its secret after the 201. */
export function toMcpServerObject(server: McpServer, serverActions: ServerAction[]) {
  return {
    id: server.id,
    url: server.url,
    source: server.oauthGrantId === null ? ("api_key" as const) : ("oauth_app" as const),
    tools: toolsOf(
      server,
      serverActions.filter((action) => action.mcpServerId === server.id),
    ),
    listedAt: server.listedAt,
    listError: server.listError,
    createdAt: server.createdAt,
  };
}

const ACTION_COLUMNS = {
  id: actions.id,
  name: actions.name,
  enabled: actions.enabled,
  offReason: actions.offReason,
  mcpServerId: actions.mcpServerId,
  createdAt: actions.createdAt,
};

type Within = { reach: ShapedArgument<SqlReach> };

const serversWithin = statement<Within>()((db, { reach }) =>
  db.select().from(mcpServers).where(reached(mcpServers, reach)).orderBy(asc(mcpServers.id)),
);

/** The actions of the servers within reach: the servers' own are those of their business and side. */
const actionsOfServersWithin = statement<Within>()((db, { reach }) =>
  db
    .select(ACTION_COLUMNS)
    .from(actions)
    .where(
      inArray(actions.mcpServerId, db.select({ id: mcpServers.id }).from(mcpServers).where(reached(mcpServers, reach))),
    )
    .orderBy(asc(actions.id)),
);

/** `GET /mcp-servers`: the servers within reach, each with its tools, in one round trip. */
export function listMcpServers(reach: Reach) {
  const argument = reachArgument(reach);
  return readTwo(serversWithin({ reach: argument }), actionsOfServersWithin({ reach: argument }), (servers, rows) =>
    servers.map((server) => toMcpServerObject(server, rows)),
  );
}

type OneServer = Within & { id: number };

const serverWithin = statement<OneServer>()((db, { reach, id }) =>
  db
    .select()
    .from(mcpServers)
    .where(and(eq(mcpServers.id, id), reached(mcpServers, reach))),
);

const actionsOfServer = statement<OneServer>()((db, { reach, id }) =>
  db
    .select()
    .from(actions)
    .where(
      eq(
        actions.mcpServerId,
        db
          .select({ id: mcpServers.id })
          .from(mcpServers)
          .where(and(eq(mcpServers.id, id), reached(mcpServers, reach))),
      ),
    )
    .orderBy(asc(actions.id)),
);

/** The server `id` within reach with its actions (whole rows, which its refresh changes), or its 404 (one round trip). */
export function mcpServerRow(reach: Reach, id: number) {
  const argument = reachArgument(reach);
  return readTwo(serverWithin({ reach: argument, id }), actionsOfServer({ reach: argument, id }), ([server], rows) => {
    if (!server) throw mcpServerNotFound();
    return { server, actions: rows };
  });
}

/** `DELETE /mcp-servers/{id}`: the server, and with it its actions and their calls (foreign keys, ON DELETE CASCADE). */
export async function deleteMcpServer(deps: Dependencies, reach: SqlReach, id: number) {
  const deleted = await deps.db
    .delete(mcpServers)
    .where(and(eq(mcpServers.id, id), reached(mcpServers, reach)))
    .returning({ id: mcpServers.id });
  if (deleted.length === 0) throw mcpServerNotFound();
}
