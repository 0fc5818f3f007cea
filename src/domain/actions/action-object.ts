import type { ActionParameters, actions } from "../../db/schema";
import { actionChange } from "./change-review";

/*
 * A connected action as it is answered, and its versions: the current one a partner registered, and the one the owner
 * approved, which the Secretary uses (docs/decisions.md, Changes to a switched-on action).
 */

export type Action = typeof actions.$inferSelect;

/** `required` is `[]` when the partner did not send it, also for actions stored before that default. */
export const withRequiredList = (parameters: ActionParameters): ActionParameters & { required: string[] } => ({
  ...parameters,
  required: parameters.required ?? [],
});

/** An action that is off has no approved version: switching it on approves the one the owner reviewed. */
export const NOTHING_APPROVED = { approvedDescription: null, approvedParameters: null } satisfies Partial<Action>;

/**
 * The description and parameters the Secretary uses: those the owner approved (docs/decisions.md, Changes to a
 * switched-on action). An action that is off has none approved; the owner's Test calls the current version.
 */
type Versions = Pick<Action, "enabled" | "description" | "parameters" | "approvedDescription" | "approvedParameters">;

export function approvedVersion(action: Versions) {
  return {
    description: action.approvedDescription ?? action.description,
    parameters: withRequiredList(action.approvedParameters ?? action.parameters),
  };
}

const currentVersion = (action: Versions) => ({
  description: action.description,
  parameters: withRequiredList(action.parameters),
});

/** The change the owner has not accepted yet, or null: none, or the action is off (switching on reviews it whole). */
export function pendingChange(action: Versions) {
  return action.enabled ? actionChange(approvedVersion(action), currentVersion(action)) : null;
}

/**
 * The action's members (docs/guides/connected-actions.md, Registering an action): `source` is "api_key" or
 * "oauth_app", or "mcp_server" for a tool of an MCP server (`mcpServerId`), and `changePending` true while a change of
 * description or parameters waits for the owner.
 */
export function toActionObject(action: Action) {
  return {
    id: action.id,
    name: action.name,
    title: action.title,
    description: action.description,
    url: action.url,
    parameters: withRequiredList(action.parameters),
    enabled: action.enabled,
    changePending: pendingChange(action) !== null,
    source:
      action.mcpServerId !== null
        ? ("mcp_server" as const)
        : action.oauthGrantId === null
          ? ("api_key" as const)
          : ("oauth_app" as const),
    mcpServerId: action.mcpServerId,
    failureCount: action.failureCount,
    lastCalledAt: action.lastCalledAt,
    lastSuccessAt: action.lastSuccessAt,
    lastFailureAt: action.lastFailureAt,
    createdAt: action.createdAt,
    updatedAt: action.updatedAt,
  };
}
