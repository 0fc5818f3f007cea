import { and, asc, desc, eq, lt, ne, or, type Placeholder } from "drizzle-orm";
import { type Read, read, readTwo, runRead } from "../../db/reads";
import { actionCalls, actions } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { conflict, notFound } from "../../lib/api-error";
import type { EpochMs } from "../../lib/time";
import { type Reach, reachArgument, reached, type SqlReach } from "../access/scope";
import { type Action, toActionObject } from "./action-object";
import { cutOffBefore, toCallObject } from "./call-object";

/*
 * The reads of connected actions, each within a reach (docs/architecture.md, Principals and owner sides): a partner's
 * scope reads its own side's actions, a business id every side's; another side's action is the same 404 as a missing
 * one.
 */

/** `GET /actions/{id}` adds its 10 most recent calls (docs/guides/connected-actions.md, The call history). */
export const RECENT_CALLS = 10;

export const actionNotFound = () => notFound("No action with that id exists for this business.");

/** A tool of an MCP server is defined by its server (docs/guides/connected-actions.md, From an MCP server). */
export const mcpToolConflict = () =>
  conflict(
    "This action is a tool of an MCP server: its definition and secret come from the server. Change the tool on the server and refresh it (POST /mcp-servers/{id}/refresh).",
    "invalid_state",
  );

/** `GET /actions` (a partner's scope: its own side) and the owner's list (a business id: every side). */
const actionsWithin = statement<{ reach: ShapedArgument<SqlReach> }>()((db, { reach }) =>
  db.select().from(actions).where(reached(actions, reach)).orderBy(asc(actions.id)),
);

export const listActions = (reach: Reach) =>
  read(actionsWithin({ reach: reachArgument(reach) }), (rows) => rows.map(toActionObject));

/** The action `id`, when it is within `reach`: what every read and write of one action is scoped by. */
export const ofBusiness = (reach: SqlReach, id: number | Placeholder) =>
  and(eq(actions.id, id), reached(actions, reach));

type OneAction = { reach: ShapedArgument<SqlReach>; id: number };
const actionWithin = statement<OneAction>()((db, { reach, id }) =>
  db.select().from(actions).where(ofBusiness(reach, id)),
);

/** The action `id` of the business, or the 404. */
export function actionRow(reach: Reach, id: number): Read<Action> {
  return read(actionWithin({ reach: reachArgument(reach), id }), ([action]) => {
    if (!action) throw actionNotFound();
    return action;
  });
}

export const findAction = (deps: Dependencies, businessId: string, id: number) =>
  runRead(deps.db, actionRow(businessId, id));

const recentCalls = statement<OneAction & { cutOff: string }>()((db, { reach, id, cutOff }) =>
  db
    .select()
    .from(actionCalls)
    .where(
      and(
        // The calls of the action only when it is within reach: another side's calls are not even read.
        eq(actionCalls.actionId, db.select({ id: actions.id }).from(actions).where(ofBusiness(reach, id))),
        or(ne(actionCalls.status, "pending"), lt(actionCalls.createdAt, cutOff)),
      ),
    )
    .orderBy(desc(actionCalls.id))
    .limit(RECENT_CALLS),
);

/** The action and its 10 most recent calls, read together; calls still under way are not listed yet. */
export function getAction(reach: Reach, id: number, now: EpochMs) {
  const argument = reachArgument(reach);
  return readTwo(
    actionWithin({ reach: argument, id }),
    recentCalls({ reach: argument, id, cutOff: cutOffBefore(now) }),
    ([action], calls) => {
      if (!action) throw actionNotFound();
      return { ...toActionObject(action), calls: calls.map(toCallObject) };
    },
  );
}
