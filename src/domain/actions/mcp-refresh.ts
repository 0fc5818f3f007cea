import { and, asc, eq, isNull, lt } from "drizzle-orm";
import { isGuardAbort } from "../../db/d1-failures";
import { actions, businesses, mcpServers } from "../../db/schema";
import type { Preparable } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { iso } from "../../lib/time";
import type { Reach } from "../access/scope";
import { actionSwitched, changedRows, type EventTarget, readForSwitch } from "../webhooks/lifecycle";
import type { EventDraft } from "../webhooks/outbox/write";
import { writeEvents } from "../webhooks/outbox/write";
import { type Action, NOTHING_APPROVED, toActionObject, withRequiredList } from "./action-object";
import { changedMeanwhile, WRITE_ATTEMPTS } from "./guarded-write";
import { chosenTools, offerOutcome, offerStatements, withOfferReasons } from "./mcp-registration";
import { type McpServer, mcpServerRow, toMcpServerObject } from "./mcp-servers";
import { type JudgedTool, listTools } from "./mcp-tools";

/*
 * A refresh of an MCP server's tools (docs/guides/connected-actions.md, From an MCP server), on the partner's request
 * and on a schedule. Definitions are pinned: a switched-on tool whose description or parameters changed keeps the
 * version the owner approved, and the owner reviews the change as a partner's PATCH; a tool gone from the server, or
 * no longer usable, is switched off with its reason; a new tool becomes an action only when the partner offers it.
 */

/** What the refresh writes onto one action, and the event it means, from the tool as now listed. */
function toolChange(action: Action, tool: JudgedTool | undefined): { changes: Partial<Action>; draft?: EventDraft } {
  const switchOff = (offReason: "removed" | "changed") => {
    const changes = { enabled: false, offReason, ...NOTHING_APPROVED };
    if (!action.enabled) return { changes: action.offReason === offReason ? {} : { offReason } };
    const object = toActionObject({ ...action, ...changes });
    return { changes, draft: actionSwitched(object, action.oauthGrantId, offReason) };
  };
  if (!tool) return switchOff("removed");
  if (!tool.definition) return switchOff("changed");
  const changes: Partial<Action> = {};
  for (const key of ["title", "description"] as const) {
    if (tool.definition[key] !== action[key]) changes[key] = tool.definition[key];
  }
  const parameters = withRequiredList(tool.definition.parameters);
  if (JSON.stringify(parameters) !== JSON.stringify(withRequiredList(action.parameters))) {
    changes.parameters = parameters;
  }
  // Back on the server, a tool switched off as removed waits for the owner again as a new one.
  if (!action.enabled && action.offReason === "removed") changes.offReason = null;
  return { changes };
}

const NOTHING_OFFERED = { rows: [], noRoom: new Set<string>() };

/** The action is still as the refresh read it: what its change was decided on. */
const asRead = (action: Action) => and(eq(actions.id, action.id), eq(actions.updatedAt, action.updatedAt));

/**
 * Lists the server's tools again and writes what changed, with the lifecycle events it means, in one D1 batch
 * guarded by what was read (another write meanwhile: read again, at most 3 times). `offer` names tools to make
 * actions of now, as at registration. A listing that fails is recorded as `listError`, the tools kept as they were.
 */
export async function refreshMcpServer(
  deps: Dependencies,
  businessId: string,
  reach: Reach,
  id: number,
  offer?: string[],
) {
  let judged: JudgedTool[] | string | undefined;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const { record, ...target } = await readForSwitch(deps, businessId, mcpServerRow(reach, id));
    judged ??= await listTools(deps, { url: record.server.url, secrets: [record.server.secret] });
    const written = await writeRefresh(deps, target, record.server, record.actions, judged, offer);
    if (written) return written;
  }
  throw changedMeanwhile();
}

async function writeRefresh(
  deps: Dependencies,
  target: EventTarget,
  server: McpServer,
  serverActions: Action[],
  judged: JudgedTool[] | string,
  offer: string[] | undefined,
) {
  const now = iso(deps.clock());
  const listed = typeof judged === "string" ? null : judged;
  const stored: McpServer = {
    ...server,
    listedAt: now,
    listError: listed ? null : (judged as string),
    tools: listed ? listed.map(({ name, reason }) => ({ name, reason })) : server.tools,
  };
  const statements: Preparable<unknown>[] = [
    deps.db
      .update(mcpServers)
      .set({ listedAt: now, listError: stored.listError, tools: stored.tools })
      .where(eq(mcpServers.id, server.id)),
  ];
  const drafts: EventDraft[] = [];
  const after: Action[] = [];
  for (const action of serverActions) {
    const { changes, draft } = listed
      ? toolChange(
          action,
          listed.find((tool) => tool.name === action.name),
        )
      : { changes: {} };
    if (Object.keys(changes).length === 0) {
      after.push(action);
      continue;
    }
    const update = deps.db
      .update(actions)
      .set({ ...changes, updatedAt: now })
      .where(asRead(action));
    statements.push(update, changedRows(deps, 1));
    if (draft) drafts.push(draft);
    after.push({ ...action, ...changes, updatedAt: now });
  }
  const fresh =
    listed && offer ? chosenTools(listed, offer).filter((tool) => !after.some((a) => a.name === tool.name)) : [];
  const offered = fresh.flatMap((tool) => (tool.definition ? [tool.definition] : []));
  const { inserts, overflow } = offerStatements(deps, server, server.id, offered, now);
  if (offered.length > 0) statements.push(...inserts, overflow);
  try {
    const { deliveryIds, results } = await writeEvents(deps, target.business, target.endpoints, drafts, statements);
    deps.enqueue(deliveryIds);
    const { rows, noRoom } =
      offered.length > 0 ? offerOutcome(results.slice(-inserts.length - 1), server.id, now) : NOTHING_OFFERED;
    const object = toMcpServerObject(stored, [...after, ...rows]);
    return { ...object, tools: withOfferReasons(object.tools, offered, noRoom) };
  } catch (error) {
    if (isGuardAbort(error)) return undefined;
    throw error;
  }
}

/** A server's tools are listed again once they are 6 hours old, at most 3 servers a shard each minute's cron run. */
export const REFRESH_AFTER_MS = 6 * 60 * 60 * 1000;
export const REFRESHED_PER_RUN = 3;

/**
 * The cron's refresh (docs/guides/connected-actions.md, From an MCP server): the shard's servers listed longest ago,
 * past 6 hours, 3 a run, so that the listings a run waits for stay within its connections and time. A business being
 * moved is left for a run after its move.
 */
export async function refreshDueMcpServers(deps: Dependencies) {
  const due = await deps.db
    .select({ id: mcpServers.id, businessId: mcpServers.businessId })
    .from(mcpServers)
    .innerJoin(businesses, eq(businesses.id, mcpServers.businessId))
    .where(and(lt(mcpServers.listedAt, iso(deps.clock() - REFRESH_AFTER_MS)), isNull(businesses.movingSince)))
    .orderBy(asc(mcpServers.listedAt))
    .limit(REFRESHED_PER_RUN);
  const runs = await Promise.allSettled(
    due.map((server) => refreshMcpServer(deps, server.businessId, server.businessId, server.id)),
  );
  for (const run of runs) if (run.status === "rejected") throw run.reason;
}
