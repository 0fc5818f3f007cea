import { isUniqueViolation } from "../../db/d1-failures";
import { insertWithinLimit } from "../../db/insert-within-limit";
import { type ActionParameters, actions } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { forbidden, invalid } from "../../lib/api-error";
import { assertRegistrableUrl } from "../../lib/public-address";
import { newSigningSecret } from "../../lib/signing";
import { iso } from "../../lib/time";
import type { Business } from "../access/businesses";
import { type Principal, principalRef } from "../access/principals";
import type { SqlReach } from "../access/scope";
import type { WebhookEndpoint } from "../webhooks/endpoints";
import { type Action, NOTHING_APPROVED, toActionObject, withRequiredList } from "./action-object";
import { assertNoContactParameters } from "./contact-details";
import { changedMeanwhile, WRITE_ATTEMPTS, writeAction } from "./guarded-write";
import { actionNotFound, findAction, mcpToolConflict, ofBusiness } from "./reads";

/*
 * The partner's side of connected actions: registering, changing and deleting one. What it registers or changes is
 * off, or keeps the version the owner approved, until the owner reviews it (src/domain/actions/owner-decisions.ts).
 */

/** At most 10 actions per business (docs/guides/connected-actions.md, Registering an action). */
export const MAX_ACTIONS_PER_BUSINESS = 10;

const NO_PARAMETERS: ActionParameters = { type: "object", properties: {}, required: [] };

export async function createAction(
  deps: Dependencies,
  principal: Principal,
  input: { name: string; title: string; description: string; url: string; parameters?: ActionParameters },
) {
  assertRegistrableUrl(deps.outbound, input.url);
  if (input.parameters) assertNoContactParameters(input.parameters);
  const now = iso(deps.clock());
  const secret = newSigningSecret();
  let action: Action | undefined;
  try {
    action = await insertWithinLimit(
      deps.db,
      actions,
      {
        businessId: principal.business.id,
        ...input,
        parameters: input.parameters ?? NO_PARAMETERS,
        secret,
        enabled: false,
        ...principalRef(principal),
        createdAt: now,
        updatedAt: now,
      },
      MAX_ACTIONS_PER_BUSINESS,
    );
  } catch (error) {
    if (isUniqueViolation(error))
      throw invalid(`The field "name" is "${input.name}", which another action of this business already uses.`, "name");
    throw error;
  }
  if (!action) {
    throw forbidden(
      `A business can have at most ${MAX_ACTIONS_PER_BUSINESS} connected actions: delete one before adding another.`,
      "limit_reached",
    );
  }
  return { ...toActionObject(action), secret };
}

/**
 * A PATCH (docs/guides/connected-actions.md, Changing an action): a new url switches the action off, with
 * `action.disabled` (`changed`) when it was on; a new description or parameters keep it on, the Secretary using the
 * approved version until the owner accepts. Only what differs is written (nothing changed leaves `updatedAt`).
 * `current` is what the request read with its credential; a write another overtook compares again with what that one
 * stored.
 */
export async function patchAction(
  deps: Dependencies,
  business: Business,
  current: { record: Action; endpoints: WebhookEndpoint[] },
  input: { title?: string; description?: string; url?: string; parameters?: ActionParameters },
) {
  if (current.record.mcpServerId !== null) throw mcpToolConflict();
  if (input.url !== undefined) assertRegistrableUrl(deps.outbound, input.url);
  if (input.parameters) assertNoContactParameters(input.parameters);
  const parameters = input.parameters && withRequiredList(input.parameters);
  let action = current.record;
  for (let attempt = 1; attempt <= WRITE_ATTEMPTS; attempt++) {
    if (attempt > 1) action = await findAction(deps, business.id, action.id);
    const changes: Partial<Action> = {};
    for (const key of ["title", "description", "url"] as const) {
      const value = input[key];
      if (value !== undefined && value !== action[key]) changes[key] = value;
    }
    if (parameters && JSON.stringify(parameters) !== JSON.stringify(withRequiredList(action.parameters))) {
      changes.parameters = parameters;
    }
    if (Object.keys(changes).length === 0) return toActionObject(action);
    if (changes.url !== undefined) {
      Object.assign(changes, NOTHING_APPROVED);
      changes.enabled = false;
      // An action that was on, switched off by this change, waits for the owner's review (the overview lists it).
      if (action.enabled) changes.offReason = "changed";
    }
    const written = await writeAction(deps, { business, endpoints: current.endpoints }, action, changes, "changed");
    if (written) return written;
  }
  throw changedMeanwhile();
}

export async function deleteAction(deps: Dependencies, reach: SqlReach, id: number) {
  const deleted = await deps.db.delete(actions).where(ofBusiness(reach, id)).returning({ id: actions.id });
  if (deleted.length === 0) throw actionNotFound();
}
