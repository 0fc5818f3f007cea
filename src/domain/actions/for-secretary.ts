import { and, asc, eq } from "drizzle-orm";
import type { ShardDatabase } from "../../db/client";
import { actions } from "../../db/schema";
import type { Channel } from "../../names-and-limits";
import { actionsRunOn } from "../secretary/channels";
import { type Action, approvedVersion } from "./action-object";

/** The business's switched-on actions, by name: what the Secretary may be offered. */
export const enabledActions = (db: ShardDatabase, businessId: string) =>
  db
    .select()
    .from(actions)
    .where(and(eq(actions.businessId, businessId), eq(actions.enabled, true)))
    .orderBy(asc(actions.name));

/**
 * What the Secretary may call on a channel, of the business's `enabledActions`: as the owner approved them
 * (docs/decisions.md, Changes to a switched-on action), none on phone calls (docs/decisions.md, Calls).
 */
export function actionsForSecretary(enabled: Action[], channel: Channel) {
  if (!actionsRunOn(channel)) return [];
  return enabled.map((action) => ({ name: action.name, ...approvedVersion(action) }));
}
