import { and, asc, count, desc, eq, gt, gte, isNull, max, ne, not, or, sql } from "drizzle-orm";
import {
  actions,
  apiKeys,
  businesses,
  deliveryAttempts,
  intakes,
  knowledgeItems,
  oauthClients,
  oauthGrants,
  ownerKnowledgeSources,
  webhookDeliveries,
  webhookEndpoints,
} from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { type EpochMs, iso } from "../../lib/time";
import type { Business } from "../access/businesses";
import { creatorColumns, withCreator } from "../access/creators";
import { pendingChange } from "../actions/action-object";
import { registeredByRevokedCredential } from "../intakes/owner-decisions";
import { SOURCE_LIMITS } from "../knowledge/registration";
import { isRegisteredEndpoint } from "../webhooks/listener-endpoints";

/** How far back a failed delivery makes its endpoint one that needs the owner. */
const FAILING_WINDOW_MS = 24 * 3_600_000;

/**
 * Intakes waiting for the owner (docs/intakes.md, The owner's side): off and never approved (`approved_version` null),
 * or switched off by a partner's PATCH (every change raises `version` and switches the intake off, while
 * `approved_version` keeps the version the owner approved). One the owner switched off themselves has `version =
 * approved_version` and is not listed. At most 5 per business, through the (business, name) index.
 */
const intakesWaiting = (deps: Dependencies, businessId: string) =>
  deps.db
    .select({
      id: intakes.id,
      name: intakes.name,
      title: intakes.title,
      approvedVersion: intakes.approvedVersion,
    })
    .from(intakes)
    .where(
      and(
        eq(intakes.businessId, businessId),
        eq(intakes.enabled, false),
        or(isNull(intakes.approvedVersion), ne(intakes.version, intakes.approvedVersion)),
        // An intake of a revoked key or a disconnected app cannot be switched on again: it waits for nobody.
        not(registeredByRevokedCredential),
      ),
    )
    .orderBy(asc(intakes.name));

/**
 * Actions waiting for the owner, off from registration and after a new `url` (docs/guides/connected-actions.md,
 * Changing an action): never switched on, or switched off by a partner's change,
 * not those the owner switched off; and those on whose description or parameters a partner changed since the owner
 * approved them (docs/decisions.md, Changes to a switched-on action: the stored texts differ here, and
 * `pendingChange` decides). At most 10 per business.
 */
const actionsWaiting = (deps: Dependencies, businessId: string) =>
  deps.db
    .select({
      id: actions.id,
      name: actions.name,
      title: actions.title,
      enabled: actions.enabled,
      offReason: actions.offReason,
      description: actions.description,
      parameters: actions.parameters,
      approvedDescription: actions.approvedDescription,
      approvedParameters: actions.approvedParameters,
      oauthGrantId: actions.oauthGrantId,
      ...creatorColumns(actions.oauthGrantId),
    })
    .from(actions)
    .where(
      and(
        eq(actions.businessId, businessId),
        or(
          and(eq(actions.enabled, false), or(isNull(actions.offReason), eq(actions.offReason, "changed"))),
          and(
            eq(actions.enabled, true),
            or(
              sql`${actions.approvedDescription} is not ${actions.description}`,
              sql`${actions.approvedParameters} is not ${actions.parameters}`,
            ),
          ),
        ),
      ),
    )
    .orderBy(asc(actions.name));

/** Why an action waits: `new`, never switched on; `changed_off`, a new url switched it off; `change_pending`. */
function actionWaiting(row: Awaited<ReturnType<typeof actionsWaiting>>[number]) {
  const { description, parameters, approvedDescription, approvedParameters, enabled, offReason, ...action } = row;
  const waiting = enabled ? "change_pending" : offReason === "changed" ? "changed_off" : "new";
  const versions = { enabled, description, parameters, approvedDescription, approvedParameters };
  return enabled && !pendingChange(versions) ? [] : [{ ...withCreator(action), waiting } as const];
}

/**
 * Endpoints whose recent deliveries fail: a delivery that failed (its sixth attempt) within the window, or one still
 * pending after a failed attempt (its next one is due within the window by the retry schedule). Both are ranges of
 * the (status, next attempt) index, so only recent failures are read; per endpoint, how many, and the last attempt
 * of the newest of them (its status code or error).
 */
function failingEndpoints(deps: Dependencies, businessId: string, now: EpochMs) {
  const { db } = deps;
  const since = iso(now - FAILING_WINDOW_MS);
  const failing = db
    .select({
      endpointId: webhookDeliveries.endpointId,
      deliveries: count().as("deliveries"),
      newestId: max(webhookDeliveries.id).as("newest_id"),
    })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.businessId, businessId),
        or(
          and(eq(webhookDeliveries.status, "failed"), gte(webhookDeliveries.nextAttemptAt, since)),
          and(
            eq(webhookDeliveries.status, "pending"),
            gte(webhookDeliveries.nextAttemptAt, since),
            gt(webhookDeliveries.attemptCount, 0),
          ),
        ),
      ),
    )
    .groupBy(webhookDeliveries.endpointId)
    .as("failing");
  return (
    db
      .select({
        id: webhookEndpoints.id,
        url: webhookEndpoints.url,
        deliveries: failing.deliveries,
        lastAttemptAt: deliveryAttempts.attemptedAt,
        lastStatusCode: deliveryAttempts.statusCode,
        lastError: deliveryAttempts.error,
      })
      .from(failing)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, failing.endpointId))
      .leftJoin(
        deliveryAttempts,
        eq(
          deliveryAttempts.id,
          sql`(select max(${deliveryAttempts.id}) from ${deliveryAttempts} where ${eq(deliveryAttempts.deliveryId, failing.newestId)})`,
        ),
      )
      // A listening session's endpoint is the partner's laptop, not the owner's concern (docs/decisions.md).
      .where(isRegisteredEndpoint)
      .orderBy(asc(webhookEndpoints.id))
  );
}

/**
 * Endpoints disabled by their health, shown on the owner's overview (docs/webhooks.md, Endpoint health): they get no
 * new deliveries until their partner or the owner enables them again. At most 20 per business, a range of the
 * (business, side) index.
 */
const disabledEndpoints = (deps: Dependencies, businessId: string) =>
  deps.db
    .select({
      id: webhookEndpoints.id,
      url: webhookEndpoints.url,
      disabledReason: webhookEndpoints.disabledReason,
      oauthGrantId: webhookEndpoints.oauthGrantId,
      ...creatorColumns(webhookEndpoints.oauthGrantId),
    })
    .from(webhookEndpoints)
    .where(
      and(eq(webhookEndpoints.businessId, businessId), eq(webhookEndpoints.status, "disabled"), isRegisteredEndpoint),
    )
    .orderBy(asc(webhookEndpoints.id));

/** Knowledge sources used, the owner's own included (docs/guides/knowledge.md, Limits): one row by primary key. */
const sourcesUsed = (deps: Dependencies, businessId: string) =>
  deps.db
    .select({
      pushed: sql<number>`(select count(*) from ${knowledgeItems} where ${eq(knowledgeItems.businessId, businessId)})`,
      own: sql<number>`(select count(*) from ${ownerKnowledgeSources} where ${eq(ownerKnowledgeSources.businessId, businessId)})`,
    })
    .from(businesses)
    .where(eq(businesses.id, businessId));

/** The active API keys and when each was last used (recorded at most once an hour; null: never). */
const activeKeys = (deps: Dependencies, businessId: string) =>
  deps.db
    .select({
      id: apiKeys.id,
      label: apiKeys.label,
      displayPrefix: apiKeys.displayPrefix,
      lastUsedAt: apiKeys.lastUsedAt,
    })
    .from(apiKeys)
    .where(and(eq(apiKeys.businessId, businessId), isNull(apiKeys.revokedAt)))
    .orderBy(desc(apiKeys.id));

/** The connected apps (not disconnected) and when each last called (recorded at most once an hour; null: never). */
const connectedApps = (deps: Dependencies, businessId: string) =>
  deps.db
    .select({ id: oauthGrants.id, appName: oauthClients.clientName, lastUsedAt: oauthGrants.lastUsedAt })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(and(eq(oauthGrants.businessId, businessId), isNull(oauthGrants.revokedAt)))
    .orderBy(desc(oauthGrants.id));

/**
 * The overview: what needs the owner: actions and intakes waiting for approval (and those a partner's change switched
 * off), endpoints whose recent deliveries fail or that their health disabled, knowledge sources used against the plan's
 * limit, and the active keys and connected apps with when each was last used (docs/decisions.md, Partners of one
 * business stay apart). One D1 batch, one query per list, each scoped by the business and read through its index: the
 * page costs one round trip, whatever the business holds.
 */
export async function ownerOverview(deps: Dependencies, business: Business, now: EpochMs = deps.clock()) {
  const [waitingIntakes, waitingActions, failing, disabled, [sources], keys, apps] = await deps.db.batch([
    intakesWaiting(deps, business.id),
    actionsWaiting(deps, business.id),
    failingEndpoints(deps, business.id, now),
    disabledEndpoints(deps, business.id),
    sourcesUsed(deps, business.id),
    activeKeys(deps, business.id),
    connectedApps(deps, business.id),
  ]);
  return {
    intakes: waitingIntakes.map(({ approvedVersion, ...intake }) => ({
      ...intake,
      /** `new`: never approved; `changed`: a partner's change switched it off after the owner approved it. */
      waiting: approvedVersion === null ? ("new" as const) : ("changed" as const),
    })),
    actions: waitingActions.flatMap(actionWaiting),
    failingEndpoints: failing,
    disabledEndpoints: disabled.map(withCreator),
    knowledge: { used: (sources?.pushed ?? 0) + (sources?.own ?? 0), limit: SOURCE_LIMITS[business.plan] },
    keys,
    apps,
  };
}
