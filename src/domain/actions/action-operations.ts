import { partnerRead, partnerWrite } from "../access/partner-operation";
import { sideOf } from "../access/scope";
import { withEndpoints } from "../webhooks/lifecycle";
import { actionRow, getAction, listActions } from "./reads";
import { createAction, deleteAction, patchAction } from "./registration";

/* What the partner API's action routes run (src/routes/actions.ts, through src/admission/partner-admission.ts). */

type ActionChanges = Parameters<typeof patchAction>[3];

export const listActionsOperation = partnerRead((side) => listActions(side));

export const getActionOperation = partnerRead((side, id: number) => getAction(side, id, side.now));

export const createActionOperation = partnerWrite({ write: createAction });

export const updateActionOperation = partnerWrite({
  // The action and its side's endpoints, with the credential: a switch-off is told only to the owner side concerned
  // (docs/architecture.md, Lifecycle events).
  read: (side, { id }: { id: number; changes: ActionChanges }) => withEndpoints(actionRow(side, id), side),
  write: (deps, principal, { changes }, current) => patchAction(deps, principal.business, current, changes),
});

export const deleteActionOperation = partnerWrite({
  write: (deps, principal, id: number) => deleteAction(deps, sideOf(principal), id),
});
