import { and, asc, eq } from "drizzle-orm";
import type { ShardDatabase } from "../../db/client";
import { intakes } from "../../db/schema";
import type { Channel } from "../../names-and-limits";
import { intakesRunOn } from "../secretary/channels";
import { normalizeField } from "./registration";

/* What the Secretary reads of intakes: the ones switched on, which it may start in a conversation. */

/** The business's switched-on intakes, oldest first: what the Secretary may be offered. */
export const enabledIntakes = (db: ShardDatabase, businessId: string) =>
  db
    .select({ id: intakes.id, name: intakes.name, description: intakes.description, fields: intakes.fields })
    .from(intakes)
    .where(and(eq(intakes.businessId, businessId), eq(intakes.enabled, true)))
    .orderBy(asc(intakes.id));

/**
 * What the Secretary may start on a channel, of the business's `enabledIntakes` (docs/decisions.md, The intake
 * conversation): only on the chat channels, never on phone calls nor over MCP (docs/guides/intakes.md, How a
 * conversation runs).
 */
export function intakesForSecretary(enabled: Awaited<ReturnType<typeof enabledIntakes>>, channel: Channel) {
  if (!intakesRunOn(channel)) return [];
  return enabled.map((row) => ({ ...row, fields: row.fields.map(normalizeField) }));
}
