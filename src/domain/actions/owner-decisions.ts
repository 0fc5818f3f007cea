import { and, asc, eq, type SQL } from "drizzle-orm";
import { actions } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { conflict } from "../../lib/api-error";
import { sha256Hex } from "../../lib/secrets";
import { type Creator, creatorColumns, creatorOf, withCreator } from "../access/creators";
import { readForSwitch } from "../webhooks/lifecycle";
import { type Action, NOTHING_APPROVED, pendingChange, toActionObject, withRequiredList } from "./action-object";
import { changedMeanwhile, WRITE_ATTEMPTS, writeAction } from "./guarded-write";
import { actionNotFound, actionRow } from "./reads";

/*
 * The owner's side of connected actions: what the owner reviews, switching an action on or off, accepting a partner's
 * change, the dashboard's list, and switching off a side's actions when its access ends. Scoped by the business alone,
 * never by a partner principal, since the owner may remove any webhook endpoint, action or pushed text, whoever
 * created it (docs/architecture.md, Principals and owner sides).
 */

/**
 * What the owner reviews before switching an action on: switching on applies only to the version (url, description,
 * parameters) the owner reviewed (docs/decisions.md, Calls), so this is a digest of exactly those three, which the
 * dashboard's form carries.
 */
export function reviewedVersion(action: Pick<Action, "url" | "description" | "parameters">): string {
  return sha256Hex(JSON.stringify([action.url, action.description, withRequiredList(action.parameters)]));
}

/** What switching on or accepting a change approves: the action's current description and parameters. */
const approving = (action: Action) => ({
  approvedDescription: action.description,
  approvedParameters: action.parameters,
});

const toolUnavailable = (why: "removed" | "unusable") =>
  conflict(
    why === "removed"
      ? "Its MCP server no longer lists this tool, so it cannot be switched on."
      : "Its MCP server lists this tool in a form that cannot be a connected action (see the server's tools), so it cannot be switched on.",
    "invalid_state",
  );

const changedSinceReview = () =>
  conflict("The action has changed since it was reviewed: review it again before switching it on.", "invalid_state");

/**
 * Only the owner switches an action on or off (docs/guides/connected-actions.md, Switched on by the owner); its side
 * gets `action.enabled` or `action.disabled`, reason `owner` (docs/architecture.md, Lifecycle events). Switching on is
 * guarded by the `reviewed` version (another is a 409) and the write by what it read, so no PATCH is switched on
 * unseen. Switching off an action that is off only marks it as the owner's, so the overview stops listing it.
 */
export async function switchAction(
  deps: Dependencies,
  businessId: string,
  actionId: number,
  enabled: boolean,
  options: { reviewed?: string } = {},
) {
  let reviewed = options.reviewed;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const { record: action, ...target } = await readForSwitch(deps, businessId, actionRow(businessId, actionId));
    if (enabled) {
      // A tool its MCP server no longer lists, or lists as no longer only reading, is not switched on
      // (docs/guides/connected-actions.md, From an MCP server).
      if (action.offReason === "removed" || action.offReason === "unusable") throw toolUnavailable(action.offReason);
      reviewed ??= reviewedVersion(action);
      if (reviewed !== reviewedVersion(action)) throw changedSinceReview();
      if (action.enabled) return toActionObject(action);
    }
    const changes = enabled
      ? { enabled, offReason: null, ...approving(action) }
      : // Off for its server's sake, it stays so marked: only the server can make it switchable again.
        {
          enabled,
          offReason:
            action.offReason === "removed" || action.offReason === "unusable" ? action.offReason : ("owner" as const),
          ...NOTHING_APPROVED,
        };
    const written = await writeAction(deps, target, action, changes, "owner");
    if (written) return written;
  }
  throw changedMeanwhile();
}

/**
 * The owner accepts a partner's change of a switched-on action (docs/decisions.md, Changes to a switched-on action):
 * the Secretary uses the current description and parameters from now on, and the action's side gets
 * `action.change_accepted`. Guarded as switching on is: `reviewed` is the `reviewedVersion` the owner saw, and a
 * different current version (a PATCH meanwhile) is a 409 that shows the change again. An action that is off has
 * nothing to accept (a 409: switching it on reviews it whole); one without a waiting change is answered as it is.
 */
export async function acceptActionChange(
  deps: Dependencies,
  businessId: string,
  actionId: number,
  options: { reviewed: string },
) {
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    const { record: action, ...target } = await readForSwitch(deps, businessId, actionRow(businessId, actionId));
    if (options.reviewed !== reviewedVersion(action)) throw changedSinceReview();
    if (!action.enabled)
      throw conflict("The action is switched off: switch it on to approve it as it now is.", "invalid_state");
    if (!pendingChange(action)) return toActionObject(action);
    const written = await writeAction(deps, target, action, approving(action), "change_accepted");
    if (written) return written;
  }
  throw changedMeanwhile();
}

const ofBusiness = (businessId: string, id: number) => and(eq(actions.id, id), eq(actions.businessId, businessId));

/**
 * Every action of the business, whoever registered it, with its creator, so that the list marks an action of a
 * disconnected app as such (docs/architecture.md, What happens when access ends). One query through the (business,
 * name) index.
 */
export async function listActionsForOwner(deps: Dependencies, businessId: string) {
  const rows = await deps.db
    .select({
      id: actions.id,
      name: actions.name,
      title: actions.title,
      enabled: actions.enabled,
      oauthGrantId: actions.oauthGrantId,
      ...creatorColumns(actions.oauthGrantId),
    })
    .from(actions)
    .where(eq(actions.businessId, businessId))
    .orderBy(asc(actions.id));
  return rows.map(withCreator);
}

/** Who registered the action `id` of the business, or the 404 (its page, and the confirmation of its removal). */
export async function actionCreator(deps: Dependencies, businessId: string, id: number): Promise<Creator> {
  const row = await deps.db
    .select({ oauthGrantId: actions.oauthGrantId, ...creatorColumns(actions.oauthGrantId) })
    .from(actions)
    .where(ofBusiness(businessId, id))
    .get();
  if (!row) throw actionNotFound();
  return creatorOf(row);
}

/**
 * When a partner's access ends, the owner chooses on the confirmation page whether its switched-on actions stop too
 * (docs/decisions.md, When access ends): this statement switches off the business's actions of one owner side
 * (`side`: the API keys' or an app connection's), as the owner's own switch would, with nothing approved left. It goes
 * in the batch that ends the access, so no call can be made between the two.
 */
export const switchSideActionsOff = (deps: Dependencies, businessId: string, side: SQL | undefined, at: string) =>
  deps.db
    .update(actions)
    .set({ enabled: false, offReason: "owner", approvedDescription: null, approvedParameters: null, updatedAt: at })
    .where(and(eq(actions.businessId, businessId), side, eq(actions.enabled, true)))
    .returning({ id: actions.id });
