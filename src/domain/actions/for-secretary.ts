import { and, asc, eq } from "drizzle-orm";
import { actions } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import type { Channel } from "../../names-and-limits";
import { actionsRunOn } from "../secretary/channels";
import { approvedVersion } from "./action-object";

/**
 * What the Secretary may call on a channel: enabled actions as the owner approved them (docs/decisions.md, Changes to
 * a switched-on action), none on phone calls (docs/decisions.md, Calls).
 */
export async function actionsForSecretary(deps: Dependencies, businessId: string, channel: Channel) {
  if (!actionsRunOn(channel)) return [];
  const rows = await deps.db
    .select()
    .from(actions)
    .where(and(eq(actions.businessId, businessId), eq(actions.enabled, true)))
    .orderBy(asc(actions.name));
  return rows.map((action) => ({ name: action.name, ...approvedVersion(action) }));
}
