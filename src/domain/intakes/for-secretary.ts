import { and, asc, eq } from "drizzle-orm";
import { intakes } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import type { Channel } from "../../names-and-limits";
import { intakesRunOn } from "../secretary/channels";
import { normalizeField } from "./registration";

/* What the Secretary reads of intakes: the ones switched on, which it may start in a conversation. */

/**
 * What the Secretary may start on a channel (docs/decisions.md, The intake conversation): the business's enabled
 * intakes, only on the chat channels where intakes run (spec: not on phone calls nor through MCP).
 */
export async function intakesForSecretary(deps: Dependencies, businessId: string, channel: Channel) {
  if (!intakesRunOn(channel)) return [];
  const rows = await deps.db
    .select({ id: intakes.id, name: intakes.name, description: intakes.description, fields: intakes.fields })
    .from(intakes)
    .where(and(eq(intakes.businessId, businessId), eq(intakes.enabled, true)))
    .orderBy(asc(intakes.id));
  return rows.map((row) => ({ ...row, fields: row.fields.map(normalizeField) }));
}
