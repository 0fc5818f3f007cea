import { partnerRead, partnerWrite } from "../access/partner-operation";
import { deleteKnowledge, listKnowledge, pushKnowledge, storedItem } from "./registration";

/* What the partner API's knowledge routes run (src/routes/knowledge.ts, through src/admission/partner-admission.ts). */

type Push = { key: string; item: Parameters<typeof pushKnowledge>[3] };

export const listKnowledgeOperation = partnerRead((side) => listKnowledge(side));

/** What is stored under the key is read with the credential: the push compares with it, and writes once. */
export const putKnowledgeOperation = partnerWrite({
  read: (side, { key }: Push) => storedItem(side, key),
  write: (deps, principal, { key, item }, existing) => pushKnowledge(deps, principal, key, item, existing),
});

export const deleteKnowledgeOperation = partnerWrite({
  write: (deps, principal, key: string) => deleteKnowledge(deps, principal.business.id, key),
});
