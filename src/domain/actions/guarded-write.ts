import { and, eq, isNull } from "drizzle-orm";
import { actions } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { conflict } from "../../lib/api-error";
import { iso } from "../../lib/time";
import {
  actionChangeAccepted,
  actionSwitched,
  changedRows,
  type EventTarget,
  type LifecycleReason,
  writeSwitch,
} from "../webhooks/lifecycle";
import { type Action, toActionObject } from "./action-object";
import { ofBusiness } from "./reads";

/*
 * A change of an action (a partner's PATCH, the owner's switch or acceptance) is written only onto the action as it
 * was read, with its lifecycle event in the same batch, and read again when another write got in between.
 */

/** How many times a change re-reads when another write got in between its read and its write. */
export const WRITE_ATTEMPTS = 3;

export const changedMeanwhile = () =>
  conflict("The action was changed by another request at the same moment; send this change again.");

/** The action is still as `action` was read: what a change was decided on, and what its event will show. */
const asRead = (action: Action) =>
  and(
    eq(actions.enabled, action.enabled),
    eq(actions.title, action.title),
    eq(actions.description, action.description),
    eq(actions.url, action.url),
    eq(actions.parameters, action.parameters),
    action.approvedDescription === null
      ? isNull(actions.approvedDescription)
      : eq(actions.approvedDescription, action.approvedDescription),
    action.approvedParameters === null
      ? isNull(actions.approvedParameters)
      : eq(actions.approvedParameters, action.approvedParameters),
  );

/**
 * Writes `changes` to the action as it was read, with the lifecycle event they mean in one D1 batch
 * (src/domain/webhooks/lifecycle.ts): `action.change_accepted` for an accepted change, else `action.enabled` or
 * `action.disabled` for `reason` when `enabled` changes. Answers the action as written, or undefined when it changed
 * meanwhile (nothing written).
 */
export async function writeAction(
  deps: Dependencies,
  target: EventTarget,
  action: Action,
  changes: Partial<Action>,
  event: LifecycleReason | "change_accepted",
) {
  const written = { ...action, ...changes, updatedAt: iso(deps.clock()) };
  const object = toActionObject(written);
  const drafts =
    event === "change_accepted"
      ? [actionChangeAccepted(object, action.oauthGrantId)]
      : written.enabled === action.enabled
        ? []
        : [actionSwitched(object, action.oauthGrantId, event)];
  const update = deps.db
    .update(actions)
    .set({ ...changes, updatedAt: written.updatedAt })
    .where(and(ofBusiness(action.businessId, action.id), asRead(action)));
  const ok = await writeSwitch(deps, target, drafts, [update, changedRows(deps, 1)]);
  return ok ? object : undefined;
}
