import type { Read } from "../../db/reads";
import type { Dependencies } from "../../dependencies";
import { conflict } from "../../lib/api-error";
import { randomToken } from "../../lib/secrets";
import { idOrNotFound } from "../../lib/validation";
import type { Business } from "../access/businesses";
import type { CredentialSide } from "../access/scope";
import type { Action } from "../actions/action-object";
import { callAction } from "../actions/calls";
import { actionNotFound, actionRow } from "../actions/reads";

/*
 * `POST /sandbox/actions/{id}/calls` (docs/decisions.md, Sandbox operations): the Secretary's call of a connected
 * action, made by the same function as the runtime's (`callAction`, src/domain/actions/calls.ts): signed, recorded in
 * the action's history, counted among the calls of its customer message, its answer fenced as the Secretary gets it.
 */

/** The action, when it is of this credential's side (another side's is the same 404 as none). */
export const sandboxAction = (side: CredentialSide, id: string): Read<Action> =>
  actionRow(side, idOrNotFound(id, actionNotFound));

/**
 * Calls the action as the Secretary would in a chat: the owner must have switched it on (as for the Secretary), the
 * conversation is a synthetic one, and the customer message is `message` when given (so that a partner can try the
 * limit of calls per message) or a new one. Round trips: the credential's batch, then the call's own two (its record,
 * taken within the limit, and its outcome).
 */
export function callSandboxAction(
  deps: Dependencies,
  business: Business,
  action: Action,
  request: { arguments: Record<string, unknown>; message?: string },
) {
  if (!action.enabled) {
    throw conflict(
      "The action is switched off: the business owner switches it on in the dashboard, on a sandbox business as on a live one.",
      "invalid_state",
    );
  }
  const call = {
    conversationId: randomToken("sandbox_conv_", 12),
    messageId: request.message ?? randomToken("sandbox_msg_", 12),
    channel: "chat_page" as const,
    arguments: request.arguments,
  };
  return callAction(deps, action, business, call);
}
