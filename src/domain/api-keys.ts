import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../db/client";
import { apiKeys, intakes } from "../db/schema";
import { notFound } from "../lib/errors";
import { isoNow } from "../lib/time";
import { numericId } from "../lib/validation";

const apiKeyNotFound = () => notFound("No API key with that id exists for this business.");

/**
 * The owner revokes an API key (spec: Authentication, "A missing, malformed or revoked key returns 401";
 * "Revoking a key switches that key's intakes off"). The revocation and the switch-off are one D1 batch, one
 * transaction: there is no moment at which the key is revoked and one of its intakes still on. Revoking a revoked
 * key keeps its first revocation time (and switches off anything still on, which cannot happen: the owner cannot
 * switch on an intake of a revoked key). A key of another business, or an id that is not one, is a 404.
 * Answers the key's id, when it was revoked and how many intakes this call switched off.
 */
export async function revokeApiKey(db: Database, businessId: string, apiKeyId: string | number) {
  const id = numericId(String(apiKeyId));
  if (id === undefined) throw apiKeyNotFound();
  const now = isoNow();
  const [revoked, switchedOff] = await db.batch([
    db
      .update(apiKeys)
      .set({ revokedAt: sql`coalesce(${apiKeys.revokedAt}, ${now})` })
      .where(and(eq(apiKeys.id, id), eq(apiKeys.businessId, businessId)))
      .returning({ id: apiKeys.id, revokedAt: apiKeys.revokedAt }),
    // Scoped by the business too, so that a key id of another business switches nothing off.
    db
      .update(intakes)
      .set({ enabled: false, updatedAt: now })
      .where(and(eq(intakes.apiKeyId, id), eq(intakes.businessId, businessId), eq(intakes.enabled, true)))
      .returning({ id: intakes.id }),
  ]);
  const [key] = revoked;
  if (!key) throw apiKeyNotFound();
  return { id: key.id, revokedAt: key.revokedAt ?? now, intakesSwitchedOff: switchedOff.length };
}
