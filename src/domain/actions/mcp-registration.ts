import { and, eq, notInArray, type SQL, sql } from "drizzle-orm";
import { isGuardAbort } from "../../db/d1-failures";
import { rowsOfBusiness } from "../../db/insert-within-limit";
import { actions, type ListedTool, mcpServers } from "../../db/schema";
import { guard } from "../../db/snapshot-guard";
import type { Dependencies } from "../../dependencies";
import { forbidden, invalid } from "../../lib/api-error";
import { assertRegistrableUrl } from "../../lib/public-address";
import { newSigningSecret } from "../../lib/signing";
import { iso } from "../../lib/time";
import { type Principal, principalRef } from "../access/principals";
import type { McpServer, ServerAction } from "./mcp-servers";
import { toMcpServerObject } from "./mcp-servers";
import { type JudgedTool, listTools, type ToolDefinition } from "./mcp-tools";
import { MAX_ACTIONS_PER_BUSINESS } from "./registration";

/*
 * Registering a partner's MCP server (docs/guides/connected-actions.md, From an MCP server): its tools are listed,
 * judged, and those offered become connected actions that start off, in one D1 batch with the server.
 */

/** At most 10 MCP servers per business, as many as it can have actions. */
export const MAX_MCP_SERVERS = 10;

export const NO_ROOM = `Not offered: the business has ${MAX_ACTIONS_PER_BUSINESS} connected actions.`;
export const NAME_TAKEN = "Not offered: another connected action of this business has this name.";

/** The rows an action of the server's tool is inserted as; `serverId` may be a sub-select of the same batch. */
export function toolActionRow(
  server: Pick<McpServer, "businessId" | "url" | "secret" | "apiKeyId" | "oauthGrantId">,
  serverId: number | SQL,
  definition: ToolDefinition,
  now: string,
) {
  return {
    businessId: server.businessId,
    ...definition,
    url: server.url,
    secret: server.secret,
    enabled: false,
    apiKeyId: server.apiKeyId,
    oauthGrantId: server.oauthGrantId,
    mcpServerId: serverId as number,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * The tools `names` asks to offer, from those listed (every usable one when `names` is absent): a name the server
 * does not list is a 400 naming it.
 */
export function chosenTools(judged: JudgedTool[], names: string[] | undefined, field = "tools") {
  if (names === undefined) return judged.filter((tool) => tool.definition !== null);
  names.forEach((name, index) => {
    if (!judged.some((tool) => tool.name === name)) {
      throw invalid(
        `The field "${field}[${index}]" names "${name}", which the server does not list.`,
        `${field}[${index}]`,
      );
    }
  });
  return judged.filter((tool) => names.includes(tool.name));
}

/**
 * The statements that insert the offered tools' actions of a server: each in its own statement (a row binds about
 * 15 values, and D1 binds at most 100 per statement), skipping a name another action has; then, past the business's
 * 10 actions, the newest of them removed again, so however many registrations race, at most 10 actions survive.
 */
export function offerStatements(
  deps: Dependencies,
  server: Parameters<typeof toolActionRow>[0],
  serverId: number | SQL,
  offered: ToolDefinition[],
  now: string,
) {
  const inserts = offered.map((definition) =>
    deps.db
      .insert(actions)
      .values(toolActionRow(server, serverId, definition, now))
      .onConflictDoNothing()
      .returning({ id: actions.id, name: actions.name }),
  );
  const kept = deps.db
    .select({ id: actions.id })
    .from(actions)
    .where(eq(actions.businessId, server.businessId))
    .orderBy(actions.id)
    .limit(MAX_ACTIONS_PER_BUSINESS);
  const overflow = deps.db
    .delete(actions)
    .where(and(eq(actions.mcpServerId, serverId), notInArray(actions.id, kept)))
    .returning({ id: actions.id });
  return { inserts, overflow };
}

/** The listing as a server stores it: each tool's reason, and whether the partner offered it. */
export const listedTools = (judged: JudgedTool[], offered: JudgedTool[]): ListedTool[] =>
  judged.map(({ name, reason, definition }) => ({
    name,
    reason,
    ...(definition && offered.some((tool) => tool.name === name) ? { offered: true as const } : {}),
  }));

/**
 * What the offer's statements stored (`results`: the inserts' answers, then the overflow's): the actions, as a
 * server's answer lists them, and the tools whose action went with the overflow.
 */
export function offerOutcome(results: unknown[], serverId: number, now: string) {
  const removed = new Set((results.at(-1) as { id: number }[]).map((row) => row.id));
  const inserted = (results.slice(0, -1) as { id: number; name: string }[][]).flat();
  return {
    rows: inserted
      .filter((row) => !removed.has(row.id))
      .map(
        ({ id, name }): ServerAction => ({
          id,
          name,
          enabled: false,
          offReason: null,
          mcpServerId: serverId,
          createdAt: now,
        }),
      ),
    noRoom: new Set(inserted.filter((row) => removed.has(row.id)).map((row) => row.name)),
  };
}

/** An offered tool that got no action says why: the business had no room for it, or another action has its name. */
export function withOfferReasons<T extends { name: string; actionId: number | null; reason: string | null }>(
  tools: T[],
  offered: ToolDefinition[],
  noRoom: Set<string>,
): T[] {
  return tools.map((tool) => {
    if (tool.actionId !== null || !offered.some((definition) => definition.name === tool.name)) return tool;
    return { ...tool, reason: noRoom.has(tool.name) ? NO_ROOM : NAME_TAKEN };
  });
}

/**
 * `POST /mcp-servers`: lists the server's tools (5 s, 16,000 bytes an answer), then stores the server and the
 * actions of the tools offered in one batch. The tools named in `tools` (every usable one by default) are offered;
 * those that do not fit the business's 10 actions, or whose name another action has, are answered with the reason.
 */
export async function registerMcpServer(
  deps: Dependencies,
  principal: Principal,
  input: { url: string; tools?: string[] },
) {
  assertRegistrableUrl(deps.outbound, input.url);
  const secret = newSigningSecret();
  const judged = await listTools(deps, { url: input.url, secrets: [secret] });
  if (typeof judged === "string") throw invalid(judged, "url");
  const chosen = chosenTools(judged, input.tools);
  const now = iso(deps.clock());
  const businessId = principal.business.id;
  const server = {
    businessId,
    url: input.url,
    secret,
    tools: listedTools(judged, chosen),
    listedAt: now,
    listError: null,
    ...principalRef(principal),
    createdAt: now,
  };
  const serverId = sql`(select ${mcpServers.id} from ${mcpServers} where ${mcpServers.businessId} = ${businessId} and ${mcpServers.secret} = ${secret})`;
  const offered = chosen.flatMap((tool) => (tool.definition ? [tool.definition] : []));
  const { inserts, overflow } = offerStatements(deps, server, serverId, offered, now);
  try {
    const [[stored], , ...results] = (await deps.db.batch([
      deps.db.insert(mcpServers).values(server).returning(),
      guard(deps.db, sql`${rowsOfBusiness(mcpServers, businessId)} <= ${MAX_MCP_SERVERS}`),
      ...inserts,
      overflow,
    ] as unknown as Parameters<typeof deps.db.batch>[0])) as unknown as [McpServer[], unknown, ...unknown[]];
    if (!stored) throw new Error("the MCP server was not stored");
    const { rows, noRoom } = offerOutcome(results, stored.id, now);
    const object = toMcpServerObject(stored, rows);
    return { ...object, tools: withOfferReasons(object.tools, offered, noRoom), secret };
  } catch (error) {
    if (!isGuardAbort(error)) throw error;
    throw forbidden(
      `A business can have at most ${MAX_MCP_SERVERS} MCP servers: delete one before adding another.`,
      "limit_reached",
    );
  }
}
