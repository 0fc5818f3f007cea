import { and, asc, eq, isNull, ne, or, sql } from "drizzle-orm";
import type { ShardDatabase } from "../../db/client";
import { selectedRowsIds } from "../../db/ids";
import { insertWithinLimit } from "../../db/insert-within-limit";
import { appEndpoints, oauthGrants, webhookEndpoints } from "../../db/schema";
import { SHARD_NAMES } from "../../db/shards";
import type { GlobalDependencies } from "../../dependencies";
import { forbidden, notFound } from "../../lib/api-error";
import type { OutboundPolicy } from "../../lib/outbound";
import { assertRegistrableUrl } from "../../lib/public-address";
import { newSigningSecret } from "../../lib/signing";
import { iso } from "../../lib/time";
import { ALL_EVENTS } from "../../names-and-limits";

/*
 * An app's own webhook endpoints (docs/guides/webhooks.md, Subscribing once as an app): kept in the global database,
 * and copied into every business connected to the app as an endpoint of the app connection's side. Deliveries and
 * the audience rules then hold as for any endpoint of that side; a connection's beginning and end are
 * app-connection-events.ts's.
 */

export type AppEndpoint = typeof appEndpoints.$inferSelect;

/** At most 20 endpoints per app, as per business (docs/guides/webhooks.md, Subscribing once as an app). */
export const MAX_APP_ENDPOINTS = 20;

export const appEndpointNotFound = () => notFound("No webhook endpoint with that id exists for this app.");

/** The app endpoint as answered: the members of a business's endpoint record, without its health, never the secret. */
export const toAppEndpointObject = (endpoint: AppEndpoint) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  description: endpoint.description,
  created_at: endpoint.createdAt,
});

/**
 * The copies of `endpoint` in the businesses of one shard connected to its app now (`businessId`: in that business
 * only), one statement (a batch's, or run alone), skipping a business that has its copy already, so that running it
 * again changes nothing. Every column in the table's order (drizzle's rule for an insert from a select); 11 bound
 * values.
 */
export function copiesOf(db: ShardDatabase, endpoint: AppEndpoint, businessId?: string) {
  const copied = sql`select 1 from ${webhookEndpoints} where ${webhookEndpoints.appEndpointId} = ${endpoint.id} and ${webhookEndpoints.businessId} = ${oauthGrants.businessId}`;
  const value = <T>(bound: T, column: string) => sql<T>`${bound}`.as(column);
  return db.insert(webhookEndpoints).select(
    db
      .select({
        id: sql<number>`${selectedRowsIds("webhook_endpoints")}`.as("id"),
        businessId: oauthGrants.businessId,
        url: value(endpoint.url, "url"),
        events: value(JSON.stringify(endpoint.events), "events"),
        description: value(endpoint.description, "description"),
        secret: value(endpoint.secret, "secret"),
        previousSecret: sql<string | null>`null`.as("previous_secret"),
        previousSecretExpiresAt: sql<string | null>`null`.as("previous_secret_expires_at"),
        status: sql<"enabled">`'enabled'`.as("status"),
        disabledReason: sql<string | null>`null`.as("disabled_reason"),
        lastSuccessAt: sql<string | null>`null`.as("last_success_at"),
        apiKeyId: sql<number | null>`null`.as("api_key_id"),
        oauthGrantId: oauthGrants.id,
        appEndpointId: value(endpoint.id, "app_endpoint_id"),
        createdAt: value(endpoint.createdAt, "created_at"),
      })
      .from(oauthGrants)
      .where(
        and(
          eq(oauthGrants.clientId, endpoint.clientId),
          isNull(oauthGrants.revokedAt),
          businessId === undefined ? undefined : eq(oauthGrants.businessId, businessId),
          sql`not exists (${copied})`,
        ),
      ),
  );
}

/** Runs `work` on every shard at once; the first failure is thrown once all have run. */
export async function onEveryShard(deps: GlobalDependencies, work: (db: ShardDatabase) => Promise<unknown>) {
  const runs = await Promise.allSettled(SHARD_NAMES.map((shard) => work(deps.onShard(shard).db)));
  for (const run of runs) if (run.status === "rejected") throw run.reason;
}

/** An ended copy's `disabled_reason`, which the owner and the app's history read. */
export const DISCONNECTED_REASON = "The owner disconnected the app: nothing more is sent for this business.";

/**
 * Every endpoint but a copy its app's disconnection ended: the owner's pages neither list nor enable one, since it is
 * no longer the business's subscription (the app's history reads it).
 */
export const notEndedCopy = or(
  isNull(webhookEndpoints.appEndpointId),
  ne(webhookEndpoints.status, "disabled"),
  // A disabled endpoint always says why; were a reason ever missing, NULL must not hide the endpoint.
  sql`coalesce(${webhookEndpoints.disabledReason}, '') <> ${DISCONNECTED_REASON}`,
);

/**
 * An endpoint of the app, within its 20, then its copy in every business connected now, shard by shard at once. A
 * shard that fails leaves the endpoint unfinished: it is removed again, copies and all, and the failure thrown, so
 * that the app sends the request again. `refusal` says why a 21st is refused.
 */
export async function addAppEndpoint(
  deps: GlobalDependencies,
  clientId: string,
  input: { url: string; events?: string[]; description?: string },
  refusal: string,
) {
  const endpoint = await insertWithinLimit(
    deps.global,
    appEndpoints,
    {
      clientId,
      url: input.url,
      events: [...new Set(input.events ?? [ALL_EVENTS])],
      description: input.description ?? "",
      secret: newSigningSecret(),
      createdAt: iso(deps.clock()),
    },
    MAX_APP_ENDPOINTS,
    sql`(select count(*) from ${appEndpoints} where ${appEndpoints.clientId} = ${clientId})`,
  );
  if (!endpoint) throw forbidden(refusal, "limit_reached");
  try {
    await onEveryShard(deps, (db) => copiesOf(db, endpoint));
  } catch (error) {
    await deleteAppEndpoint(deps, clientId, endpoint.id).catch(() => undefined);
    throw error;
  }
  return endpoint;
}

/** `POST /app/webhooks`: a registrable url (as `POST /webhooks` takes), then the endpoint and its copies. */
export async function createAppEndpoint(
  deps: GlobalDependencies & { outbound: OutboundPolicy },
  clientId: string,
  input: { url: string; events?: string[]; description?: string },
) {
  assertRegistrableUrl(deps.outbound, input.url);
  const endpoint = await addAppEndpoint(
    deps,
    clientId,
    input,
    `An app can have at most ${MAX_APP_ENDPOINTS} webhook endpoints: delete one before adding another.`,
  );
  return { ...toAppEndpointObject(endpoint), secret: endpoint.secret };
}

/** The app's endpoints, oldest first. */
export const listAppEndpoints = (deps: GlobalDependencies, clientId: string) =>
  deps.global
    .select()
    .from(appEndpoints)
    .where(eq(appEndpoints.clientId, clientId))
    .orderBy(asc(appEndpoints.id))
    .then((rows) => rows.map(toAppEndpointObject));

export async function getAppEndpoint(deps: GlobalDependencies, clientId: string, id: number) {
  const [endpoint] = await deps.global
    .select()
    .from(appEndpoints)
    .where(and(eq(appEndpoints.id, id), eq(appEndpoints.clientId, clientId)));
  if (!endpoint) throw appEndpointNotFound();
  return toAppEndpointObject(endpoint);
}

/**
 * `DELETE /app/webhooks/{id}`: every business's copy first, with their deliveries, then the endpoint, so that a shard
 * that fails leaves it to be deleted again.
 */
export async function deleteAppEndpoint(deps: GlobalDependencies, clientId: string, id: number) {
  const [endpoint] = await deps.global
    .select({ id: appEndpoints.id })
    .from(appEndpoints)
    .where(and(eq(appEndpoints.id, id), eq(appEndpoints.clientId, clientId)));
  if (!endpoint) throw appEndpointNotFound();
  await onEveryShard(deps, (db) => db.delete(webhookEndpoints).where(eq(webhookEndpoints.appEndpointId, id)));
  await deps.global.delete(appEndpoints).where(eq(appEndpoints.id, id));
}

/**
 * `POST /app/webhooks/{id}/enable`: every business's copy that endpoint health disabled (docs/webhooks.md, Endpoint
 * health) receives new events again, in every shard at once; a copy its app's disconnection ended stays ended.
 * Answers how many copies were enabled: the app then recovers from the time they were disabled.
 */
export async function enableAppEndpoint(deps: GlobalDependencies, clientId: string, id: number) {
  await getAppEndpoint(deps, clientId, id);
  let enabled = 0;
  await onEveryShard(deps, async (db) => {
    const rows = await db
      .update(webhookEndpoints)
      .set({ status: "enabled", disabledReason: null })
      .where(and(eq(webhookEndpoints.appEndpointId, id), eq(webhookEndpoints.status, "disabled"), notEndedCopy))
      .returning({ id: webhookEndpoints.id });
    enabled += rows.length;
  });
  return { enabled };
}
