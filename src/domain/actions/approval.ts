import type { Dependencies } from "../../dependencies";
import { conflict } from "../../lib/errors";
import { sha256Hex } from "../../lib/secrets";
import { readForSwitch } from "../webhooks/lifecycle";
import { type Action, NOTHING_APPROVED, pendingChange, toActionObject, withRequiredList } from "./action-object";
import { changedMeanwhile, WRITE_ATTEMPTS, writeAction } from "./guarded-write";
import { actionRow } from "./reads";

/*
 * The owner's approval of a connected action: what the owner reviews, switching the action on or off, and accepting a
 * partner's change. For the dashboard, scoped by the business alone, never by a partner principal (docs/architecture.md,
 * Principals and owner sides).
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

const changedSinceReview = () =>
  conflict("The action has changed since it was reviewed: review it again before switching it on.");

/**
 * The owner switches an action on or off (spec: "Only the business owner can switch an action ... on or off"), and its
 * side gets `action.enabled` or `action.disabled` with reason `owner` (docs/architecture.md, Lifecycle events).
 * Switching on is guarded like an intake's: `reviewed`, when given, is the `reviewedVersion` the owner saw, and a
 * different current version is a 409; without it, the version first read is the one reviewed. The write is guarded by
 * what it read, in the same batch, so a PATCH landing between the read and the write is never switched on unseen.
 * Switching off an action that is off marks it as the owner's (the overview no longer lists it as waiting), and sends
 * nothing.
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
      reviewed ??= reviewedVersion(action);
      if (reviewed !== reviewedVersion(action)) throw changedSinceReview();
      if (action.enabled) return toActionObject(action);
    }
    const changes = enabled
      ? { enabled, offReason: null, ...approving(action) }
      : { enabled, offReason: "owner" as const, ...NOTHING_APPROVED };
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
    if (!action.enabled) throw conflict("The action is switched off: switch it on to approve it as it now is.");
    if (!pendingChange(action)) return toActionObject(action);
    const written = await writeAction(deps, target, action, approving(action), "change_accepted");
    if (written) return written;
  }
  throw changedMeanwhile();
}
