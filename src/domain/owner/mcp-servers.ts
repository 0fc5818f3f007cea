import { and, eq, isNotNull } from "drizzle-orm";
import { readTwo, runRead } from "../../db/reads";
import { actions, mcpServers } from "../../db/schema";
import { statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { type Creator, creatorColumns, creatorOf } from "../access/creators";
import { listMcpServers } from "../actions/mcp-servers";

/*
 * The owner's view of the business's MCP servers (docs/guides/connected-actions.md, From an MCP server): each server
 * as its partner reads it, with who registered it, and each of its tools with its action's title and whether that
 * action is off because the server no longer lists the tool. Scoped by the business alone: the owner sees every
 * side's servers (docs/architecture.md, Principals and owner sides).
 */

type OfBusiness = { business: string };

const serverCreators = statement<OfBusiness>()((db, { business }) =>
  db
    .select({ id: mcpServers.id, oauthGrantId: mcpServers.oauthGrantId, ...creatorColumns(mcpServers.oauthGrantId) })
    .from(mcpServers)
    .where(eq(mcpServers.businessId, business)),
);

const toolActions = statement<OfBusiness>()((db, { business }) =>
  db
    .select({ id: actions.id, title: actions.title, offReason: actions.offReason })
    .from(actions)
    .where(and(eq(actions.businessId, business), isNotNull(actions.mcpServerId))),
);

/** The business's servers, oldest first, each with its creator and tools, in one round trip. */
export async function mcpServersForOwner(deps: Dependencies, businessId: string) {
  const business = { business: businessId };
  const own = readTwo(serverCreators(business), toolActions(business), (creatorRows, actionRows) => ({
    creators: new Map(creatorRows.map((row) => [row.id, creatorOf(row)])),
    offered: new Map(actionRows.map((row) => [row.id, row])),
  }));
  const servers = listMcpServers(businessId);
  const first = own.statements.length;
  return runRead(deps.db, {
    statements: [...own.statements, ...servers.statements],
    answer: (results) => {
      const { creators, offered } = own.answer(results.slice(0, first));
      return servers.answer(results.slice(first)).map((server) => ({
        ...server,
        // One batch is one snapshot: every server listed has its row among the creators'.
        creator: creators.get(server.id) as Creator,
        tools: server.tools.map((tool) => {
          const action = tool.actionId === null ? undefined : offered.get(tool.actionId);
          return { ...tool, title: action?.title ?? tool.name, removed: action?.offReason === "removed" };
        }),
      }));
    },
  });
}

export type OwnerMcpServer = Awaited<ReturnType<typeof mcpServersForOwner>>[number];
