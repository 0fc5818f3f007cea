import { and, desc, eq, isNull, notExists, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { insertWithinLimit } from "../../db/insert-within-limit";
import { apiKeys, intakes, webhookEndpoints } from "../../db/schema";
import { forbidden, notFound } from "../../lib/errors";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { isoNow } from "../../lib/time";
import sharedConstants from "../../shared-constants.json";
import { API_KEY_PREFIX } from "./principals";

export const apiKeyNotFound = () => notFound("No API key with that id exists for this business.");

/**
 * The owner revokes an API key (spec: Authentication, "A missing, malformed or revoked key returns 401";
 * "Revoking a key switches that key's intakes off"). The revocation and the switch-off are one D1 batch, one
 * transaction: there is no moment at which the key is revoked and one of its intakes still on. Revoking a revoked
 * key keeps its first revocation time (and switches off anything still on, which cannot happen: the owner cannot
 * switch on an intake of a revoked key). When it was the business's last active key, the API-key side's webhook
 * endpoints are deleted in the same batch. A key of another business, or an id that is not one, is a 404.
 * Answers the key's id, when it was revoked, how many intakes this call switched off and how many endpoints it
 * deleted.
 */
export async function revokeApiKey(db: Database, businessId: string, id: number) {
  const now = isoNow();
  const [revoked, switchedOff, endpointsDeleted] = await db.batch([
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
    // DESIGN.md, What happens when access ends: the endpoints of the API-key side stop receiving once the business has
    // no active key left, deleted with their pending deliveries (cascade). Decided after the revocation above, in the
    // same transaction, so two last keys revoked at once still leave none behind.
    db
      .delete(webhookEndpoints)
      .where(
        and(
          eq(webhookEndpoints.businessId, businessId),
          isNull(webhookEndpoints.oauthGrantId),
          notExists(
            db
              .select({ id: apiKeys.id })
              .from(apiKeys)
              .where(and(eq(apiKeys.businessId, businessId), isNull(apiKeys.revokedAt))),
          ),
        ),
      )
      .returning({ id: webhookEndpoints.id }),
  ]);
  const [key] = revoked;
  if (!key) throw apiKeyNotFound();
  return {
    id: key.id,
    revokedAt: key.revokedAt ?? now,
    intakesSwitchedOff: switchedOff.length,
    endpointsDeleted: endpointsDeleted.length,
  };
}

/** Spec, Authentication: "At most 10 active keys per business." */
export const MAX_ACTIVE_KEYS = sharedConstants.MAX_ACTIVE_KEYS;

/** The owner's list of keys: label, first characters, when created and revoked; never the key or its hash. */
export async function listApiKeys(db: Database, businessId: string) {
  return db
    .select({
      id: apiKeys.id,
      label: apiKeys.label,
      displayPrefix: apiKeys.displayPrefix,
      createdAt: apiKeys.createdAt,
      revokedAt: apiKeys.revokedAt,
    })
    .from(apiKeys)
    .where(eq(apiKeys.businessId, businessId))
    .orderBy(desc(apiKeys.id));
}

/**
 * The owner creates a key (spec: "The owner creates keys in the dashboard"): `sk_live_` + 32 random bytes, shown
 * once in the answer, stored as its SHA-256 (DESIGN.md, API key format). The count of active keys and the insert
 * are one transaction, so the 11th is refused however many are created at once.
 */
export async function createApiKey(db: Database, businessId: string, label: string) {
  const key = randomToken(API_KEY_PREFIX);
  const activeKeys = sql`(select count(*) from ${apiKeys} where ${apiKeys.businessId} = ${businessId} and ${apiKeys.revokedAt} is null)`;
  const row = await insertWithinLimit(
    db,
    apiKeys,
    {
      businessId,
      keyHash: sha256Hex(key),
      displayPrefix: key.slice(0, 12),
      label: label.trim() || "API key",
      createdAt: isoNow(),
    },
    MAX_ACTIVE_KEYS,
    activeKeys,
  );
  if (!row) {
    throw forbidden(
      `A business can have at most ${MAX_ACTIVE_KEYS} active API keys: revoke one before creating another.`,
    );
  }
  return { id: row.id, key, label: row.label, displayPrefix: row.displayPrefix };
}
