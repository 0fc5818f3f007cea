import { and, asc, eq, type SQL } from "drizzle-orm";
import { actions } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { type Creator, creatorColumns, creatorOf, withCreator } from "../access/creators";
import { actionNotFound } from "./reads";

/*
 * The owner's side of connected actions (docs/architecture.md, Principals and owner sides): scoped by the business
 * alone, never by a partner principal, since the owner may remove any webhook endpoint, action or pushed text, whoever
 * created it.
 */

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
