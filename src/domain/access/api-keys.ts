import { and, count, desc, eq, isNull, ne, notExists, sql } from "drizzle-orm";
import { insertWithinLimit } from "../../db/insert-within-limit";
import type { Read } from "../../db/reads";
import { actions, apiKeys, intakes, webhookEndpoints } from "../../db/schema";
import { oneOff } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { conflict, forbidden, notFound } from "../../lib/api-error";
import { iso } from "../../lib/time";
import { type Action, toActionObject } from "../actions/action-object";
import { switchSideActionsOff } from "../actions/owner-decisions";
import { type IntakeRow, intakeOwner, toIntakeObject } from "../intakes/registration";
import { actionSwitched, changedRows, intakeSwitched, readForSwitch, writeSwitch } from "../webhooks/lifecycle";
import { isListenerEndpoint, isListenerUrl } from "../webhooks/listener-endpoints";
import { closeListeningSessions } from "../webhooks/listening-sessions";
import { MAX_ACTIVE_KEYS, newApiKey } from "./api-key-format";

export const apiKeyNotFound = () => notFound("No API key with that id exists for this business.");

/**
 * What a revocation is decided on: the key, how many other keys stay active, the key's intakes that are on, and the
 * API keys' actions that are on.
 */
function revocationOf(
  deps: Dependencies,
  businessId: string,
  id: number,
): Read<{
  revokedAt: string | null;
  otherActiveKeys: number;
  intakesOn: IntakeRow[];
  actionsOn: Action[];
}> {
  const { db } = deps;
  return {
    statements: [
      oneOff(
        db
          .select({ revokedAt: apiKeys.revokedAt })
          .from(apiKeys)
          .where(and(eq(apiKeys.id, id), eq(apiKeys.businessId, businessId))),
      ),
      oneOff(
        db
          .select({ count: count() })
          .from(apiKeys)
          .where(and(eq(apiKeys.businessId, businessId), isNull(apiKeys.revokedAt), ne(apiKeys.id, id))),
      ),
      oneOff(
        db
          .select()
          .from(intakes)
          .where(and(eq(intakes.apiKeyId, id), eq(intakes.businessId, businessId), eq(intakes.enabled, true))),
      ),
      oneOff(
        db
          .select()
          .from(actions)
          .where(and(eq(actions.businessId, businessId), isNull(actions.oauthGrantId), eq(actions.enabled, true))),
      ),
    ],
    answer: ([keys, others, on, actionsOn]) => {
      const [key] = keys as Array<{ revokedAt: string | null }>;
      if (!key) throw apiKeyNotFound();
      const [other] = others as Array<{ count: number }>;
      return {
        revokedAt: key.revokedAt,
        otherActiveKeys: other?.count ?? 0,
        intakesOn: on as IntakeRow[],
        actionsOn: actionsOn as Action[],
      };
    },
  };
}

/** How many times a revocation re-reads when another write got in between its read and its write. */
const REVOCATION_ATTEMPTS = 3;

/**
 * The owner revokes an API key: a 401 from then on, and its intakes switched off in the same D1 batch, each telling
 * the key's endpoints `intake.disabled` (docs/architecture.md, What happens when access ends). The last active key
 * also takes the API keys' endpoints; `switchActionsOff` is the owner's choice for their actions (docs/decisions.md,
 * When access ends). The batch is guarded by what it was decided on, so the counts it answers are exact. Another
 * business's key is a 404; a second revocation keeps the first time.
 */
export async function revokeApiKey(
  deps: Dependencies,
  businessId: string,
  id: number,
  options: { switchActionsOff?: boolean } = {},
) {
  const { db } = deps;
  for (let attempt = 1; attempt <= REVOCATION_ATTEMPTS; attempt++) {
    const { record, ...target } = await readForSwitch(deps, businessId, revocationOf(deps, businessId, id));
    const now = iso(deps.clock());
    const revokedAt = record.revokedAt ?? now;
    const lastActiveKey = record.otherActiveKeys === 0;
    const endpointsDeleted = lastActiveKey ? target.endpoints.filter((endpoint) => endpoint.oauthGrantId === null) : [];
    // The key's listening sessions end with it, whatever other keys remain (docs/webhooks.md, Listening sessions end):
    // their endpoints are deleted in the batch, so no event is written for them.
    const sessionsEnded = target.endpoints.filter(
      (endpoint) =>
        isListenerUrl(endpoint.url) && (lastActiveKey ? endpoint.oauthGrantId === null : endpoint.apiKeyId === id),
    );
    const receiving = {
      ...target,
      endpoints: target.endpoints.filter((endpoint) => !sessionsEnded.includes(endpoint)),
    };
    const actionsOff = options.switchActionsOff ? record.actionsOn : [];
    const drafts = lastActiveKey
      ? []
      : [
          ...record.intakesOn.map((row) =>
            intakeSwitched(
              toIntakeObject({ ...row, enabled: false, updatedAt: now }),
              intakeOwner(row),
              "credential_revoked",
            ),
          ),
          ...actionsOff.map((row) =>
            actionSwitched(toActionObject({ ...row, enabled: false, updatedAt: now }), null, "credential_revoked"),
          ),
        ];
    const written = await writeSwitch(deps, receiving, drafts, [
      db
        .update(apiKeys)
        .set({ revokedAt })
        .where(
          and(
            eq(apiKeys.id, id),
            eq(apiKeys.businessId, businessId),
            record.revokedAt === null ? isNull(apiKeys.revokedAt) : eq(apiKeys.revokedAt, record.revokedAt),
          ),
        ),
      changedRows(deps, 1),
      // Scoped by the business too, so that a key id of another business switches nothing off.
      db
        .update(intakes)
        .set({ enabled: false, updatedAt: now })
        .where(and(eq(intakes.apiKeyId, id), eq(intakes.businessId, businessId), eq(intakes.enabled, true))),
      changedRows(deps, record.intakesOn.length),
      // The endpoints of the API-key side stop receiving once the business has no active key left, deleted with their
      // pending deliveries (cascade; docs/architecture.md, What happens when access ends). Decided after the
      // revocation above, in the same transaction, so two last keys revoked at once still leave none behind.
      db.delete(webhookEndpoints).where(
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
      ),
      changedRows(deps, endpointsDeleted.length),
      db
        .delete(webhookEndpoints)
        .where(and(eq(webhookEndpoints.businessId, businessId), eq(webhookEndpoints.apiKeyId, id), isListenerEndpoint)),
      // The owner's choice on the confirmation page: the API keys' actions that are on stop with the key.
      switchSideActionsOff(deps, businessId, options.switchActionsOff ? isNull(actions.oauthGrantId) : sql`false`, now),
      changedRows(deps, actionsOff.length),
    ]);
    if (written) {
      await closeListeningSessions(
        deps,
        sessionsEnded.map((endpoint) => endpoint.url),
        "accessEnded",
      );
      return {
        id,
        revokedAt,
        intakesSwitchedOff: record.intakesOn.length,
        actionsSwitchedOff: actionsOff.length,
        endpointsDeleted: endpointsDeleted.length,
      };
    }
  }
  throw conflict("The key's intakes or endpoints were changed by another request at the same moment; revoke it again.");
}

export { MAX_ACTIVE_KEYS };

/** The owner's list of keys: label, first characters, when created and revoked; never the key or its hash. */
export async function listApiKeys(deps: Dependencies, businessId: string) {
  return deps.db
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
 * The owner creates a key in the dashboard (docs/guides/getting-started.md, A credential): `sk_live_` + 32 random
 * bytes, shown once in the answer, stored as its SHA-256 (docs/decisions.md, Data model); a sandbox business's is a
 * test key (`sk_test_`). The count of active keys and the insert are one transaction, so the 11th is refused however
 * many are created at once.
 */
export async function createApiKey(deps: Dependencies, business: { id: string; sandbox: boolean }, label: string) {
  const businessId = business.id;
  const { key, keyHash, displayPrefix } = newApiKey(deps.shard, { test: business.sandbox });
  const activeKeys = sql`(select count(*) from ${apiKeys} where ${apiKeys.businessId} = ${businessId} and ${apiKeys.revokedAt} is null)`;
  const row = await insertWithinLimit(
    deps.db,
    apiKeys,
    {
      businessId,
      keyHash,
      displayPrefix,
      label: label.trim() || "API key",
      createdAt: iso(deps.clock()),
    },
    MAX_ACTIVE_KEYS,
    activeKeys,
  );
  if (!row) {
    throw forbidden(
      `A business can have at most ${MAX_ACTIVE_KEYS} active API keys: revoke one before creating another.`,
      "limit_reached",
    );
  }
  return { id: row.id, key, label: row.label, displayPrefix: row.displayPrefix };
}
