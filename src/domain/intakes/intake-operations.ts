import { partnerRead, partnerWrite } from "../access/partner-operation";
import { withEndpoints } from "../webhooks/lifecycle";
import { createIntake, deleteIntake, getIntake, listIntakes, ownedIntakeRow, patchIntake } from "./registration";
import { listResponses } from "./responses";

/* What the partner API's intake routes run (src/routes/intakes.ts, through src/admission/partner-admission.ts). */

type IntakeChanges = Parameters<typeof patchIntake>[3];

export const listIntakesOperation = partnerRead((side) => listIntakes(side));

export const getIntakeOperation = partnerRead(getIntake);

export const createIntakeOperation = partnerWrite({ write: createIntake });

export const updateIntakeOperation = partnerWrite({
  // The intake and its side's endpoints, with the credential: a switch-off is told only to the owner side concerned
  // (docs/architecture.md, Lifecycle events).
  read: (side, { id }: { id: number; changes: IntakeChanges }) => withEndpoints(ownedIntakeRow(side, id), side),
  write: (deps, principal, { changes }, current) => patchIntake(deps, principal, current.record.id, changes, current),
});

export const deleteIntakeOperation = partnerWrite({ write: deleteIntake });

export const listIntakeResponsesOperation = partnerRead((side, { id, before }: { id: number; before?: number }) =>
  listResponses(side, id, before),
);
