import { and, asc, eq, inArray, isNull, lt, sql } from "drizzle-orm";
import { isGuardAbort } from "../../db/d1-failures";
import { actions, businesses, mcpServers } from "../../db/schema";
import { guard } from "../../db/snapshot-guard";
import type { Preparable } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { iso } from "../../lib/time";
import type { Reach } from "../access/scope";
import { actionSwitched, changedRows, type EventTarget, readForSwitch } from "../webhooks/lifecycle";
import type { EventDraft } from "../webhooks/outbox/write";
import { writeEvents } from "../webhooks/outbox/write";
import { type Action, NOTHING_APPROVED, toActionObject, withRequiredList } from "./action-object";
import { changedMeanwhile, WRITE_ATTEMPTS } from "./guarded-write";
import { chosenTools, listedTools, offerOutcome, offerStatements, withOfferReasons } from "./mcp-registration";
import { type McpServer, mcpServerRow, toMcpServerObject } from "./mcp-servers";
import { type JudgedTool, listTools, type ToolDefinition } from "./mcp-tools";

/*
 * A refresh of an MCP server's tools (docs/guides/connected-actions.md, From an MCP server), on the partner's request
 * and on a schedule. Definitions are pinned: a switched-on tool whose description or parameters changed keeps the
 * version the owner approved, and the owner reviews the change as a partner's PATCH; a tool gone from the server, or
 * no longer usable, is switched off with its reason; a new tool becomes an action only when the partner offers it.
 */

/** What the refresh writes onto one action, and the event it means, from the tool as now listed. */
function toolChange(action: Action, tool: JudgedTool | undefined): { changes: Partial<Action>; draft?: EventDraft } {
  // Its event says `removed`, or `changed` for a tool that no longer fits an action (`unusable` on the row).
  const switchOff = (offReason: "removed" | "unusable") => {
    const changes = { enabled: false, offReason, ...NOTHING_APPROVED };
    if (!action.enabled) return { changes: action.offReason === offReason ? {} : { offReason } };
    const object = toActionObject({ ...action, ...changes });
    const reason = offReason === "removed" ? "removed" : "changed";
    return { changes, draft: actionSwitched(object, action.oauthGrantId, reason) };
  };
  if (!tool) return switchOff("removed");
  if (!tool.definition) return switchOff("unusable");
  const changes: Partial<Action> = {};
  for (const key of ["title", "description"] as const) {
    if (tool.definition[key] !== action[key]) changes[key] = tool.definition[key];
  }
  const parameters = withRequiredList(tool.definition.parameters);
  if (JSON.stringify(parameters) !== JSON.stringify(withRequiredList(action.parameters))) {
    changes.parameters = parameters;
  }
  // Back on the server, or usable again, a tool switched off for it waits for the owner again as a new one.
  if (!action.enabled && (action.offReason === "removed" || action.offReason === "unusable")) changes.offReason = null;
  return { changes };
}

const NOTHING_OFFERED = { rows: [], noRoom: new Set<string>() };

/**
 * The action is still as the refresh read it: what its change was decided on, compared column by column, since two
 * writes within one millisecond leave the same `updatedAt` (and a second `action.disabled` would follow).
 */
const asRead = (action: Action) =>
  and(
    eq(actions.id, action.id),
    eq(actions.enabled, action.enabled),
    action.offReason === null ? isNull(actions.offReason) : eq(actions.offReason, action.offReason),
    eq(actions.title, action.title),
    eq(actions.description, action.description),
    eq(actions.parameters, action.parameters),
  );

/**
 * None of the tools offered became an action of the server since the read (a refresh at the same moment offered it):
 * otherwise the batch aborts and is decided again, instead of answering the server's own action as a name taken.
 */
const notYetOffered = (deps: Dependencies, serverId: number, offered: ToolDefinition[]) => {
  const names = offered.map((tool) => tool.name);
  const ofServer = and(eq(actions.mcpServerId, serverId), inArray(actions.name, names));
  return guard(deps.db, sql`not exists (select 1 from ${actions} where ${ofServer})`);
};

/**
 * The server and its actions, with what the refresh's events are written with: a partner's refresh reads them with
 * its credential (one round trip), the cron's first refresh attempt and every later one with `readForSwitch`.
 */
export type LoadedServer = EventTarget & { record: { server: McpServer; actions: Action[] } };

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
  options: { offer?: string[]; loaded?: LoadedServer } = {},
) {
  const { offer } = options;
  let judged: JudgedTool[] | string | undefined;
  let loaded = options.loaded;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const { record, ...target } = loaded ?? (await readForSwitch(deps, businessId, mcpServerRow(reach, id)));
    loaded = undefined;
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
  const statements: Preparable<unknown>[] = [];
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
  // The tools offered so far (the server's actions, and those offered that got none) and those offered now.
  const wasOffered = [...server.tools.filter((tool) => tool.offered), ...serverActions];
  const stored: McpServer = {
    ...server,
    listedAt: now,
    listError: listed ? null : (judged as string),
    tools: listed
      ? listedTools(
          listed,
          listed.filter((tool) => fresh.includes(tool) || wasOffered.some((other) => other.name === tool.name)),
        )
      : server.tools,
  };
  statements.unshift(
    deps.db
      .update(mcpServers)
      .set({ listedAt: now, listError: stored.listError, tools: stored.tools })
      .where(eq(mcpServers.id, server.id)),
  );
  const { inserts, overflow } = offerStatements(deps, server, server.id, offered, now);
  if (offered.length > 0) statements.push(notYetOffered(deps, server.id, offered), ...inserts, overflow);
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
 * past 6 hours, 3 a run one after another, so that the listings a run waits for stay within its connections and time. A business being
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
  // One at a time: a listing's 5 s run from its start, so listings waiting for the run's 6 connections behind hanging
  // servers would time out unheard; a failure does not keep the others from their refresh.
  let failure: unknown;
  for (const server of due) {
    await refreshMcpServer(deps, server.businessId, server.businessId, server.id).catch((error: unknown) => {
      failure ??= error;
    });
  }
  if (failure !== undefined) throw failure;
}
