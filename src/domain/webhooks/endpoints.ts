import { and, asc, eq, isNull, not } from "drizzle-orm";
import type { ShardDatabase } from "../../db/client";
import { insertWithinLimit, rowsOfBusiness } from "../../db/insert-within-limit";
import { mapRead, type Read, read } from "../../db/reads";
import { webhookEndpoints } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { forbidden, notFound } from "../../lib/api-error";
import { assertRegistrableUrl } from "../../lib/public-address";
import { newSigningSecret } from "../../lib/signing";
import { iso } from "../../lib/time";
import { ALL_EVENTS } from "../../names-and-limits";
import { type Principal, principalRef } from "../access/principals";
import { type Reach, reachArgument, reached, type SqlReach } from "../access/scope";
import { anotherKeysAnswers, changeableBy } from "./intake-answers";
import { isListenerUrl, isRegisteredEndpoint } from "./listener-endpoints";

/** At most 20 endpoints per business (docs/guides/webhooks.md, Subscribing). */
export const MAX_ENDPOINTS_PER_BUSINESS = 20;
/** A sandbox business's smaller fan-out: each event it causes is at most this many deliveries (docs/guides/sandbox.md). */
export const MAX_ENDPOINTS_PER_SANDBOX = 5;

export type WebhookEndpoint = typeof webhookEndpoints.$inferSelect;

/**
 * The webhook endpoint record: `{ id, url, events, description, created_at }` and its health, `status`,
 * `disabled_reason`, `last_success_at` (docs/decisions.md, Decisions the design made where the contract is silent;
 * docs/webhooks.md, Endpoint health). The secret never again: it is shown once, in the 201.
 */
export function toEndpointObject(endpoint: WebhookEndpoint) {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    status: endpoint.status,
    disabled_reason: endpoint.disabledReason,
    last_success_at: endpoint.lastSuccessAt,
    created_at: endpoint.createdAt,
  };
}

/**
 * `events` left out means `["*"]`, every event but opt-in ones (docs/guides/webhooks.md, Subscribing). Duplicates are
 * folded.
 */
export async function createEndpoint(
  deps: Dependencies,
  principal: Principal,
  input: { url: string; events?: string[]; description?: string },
) {
  // An https url of a public address, loopback only in local development (docs/guides/webhooks.md, Subscribing), so
  // that no delivery reaches our own network (docs/architecture.md, Outbound calls).
  assertRegistrableUrl(deps.outbound, input.url);
  const secret = newSigningSecret();
  const limit = principal.business.sandbox ? MAX_ENDPOINTS_PER_SANDBOX : MAX_ENDPOINTS_PER_BUSINESS;
  const endpoint = await insertWithinLimit(
    deps.db,
    webhookEndpoints,
    {
      businessId: principal.business.id,
      url: input.url,
      events: [...new Set(input.events ?? [ALL_EVENTS])],
      description: input.description ?? "",
      secret,
      ...principalRef(principal),
      createdAt: iso(deps.clock()),
    },
    limit,
    // Listening sessions' endpoints are temporary and have their own limit (src/domain/webhooks/listener-endpoints.ts);
    // an app's subscriptions count in the app's (src/domain/webhooks/app-endpoints.ts).
    rowsOfBusiness(
      webhookEndpoints,
      principal.business.id,
      and(isRegisteredEndpoint, isNull(webhookEndpoints.appEndpointId)),
    ),
  );
  if (!endpoint) {
    throw forbidden(
      `A ${principal.business.sandbox ? "sandbox " : ""}business can have at most ${limit} webhook endpoints: delete one before adding another.`,
      "limit_reached",
    );
  }
  return { ...toEndpointObject(endpoint), secret };
}

export function endpointsOf(db: ShardDatabase, reach: SqlReach) {
  return db.select().from(webhookEndpoints).where(reached(webhookEndpoints, reach)).orderBy(asc(webhookEndpoints.id));
}

const endpointsWithin = statement<{ reach: ShapedArgument<SqlReach> }>()((db, { reach }) => endpointsOf(db, reach));

/**
 * The endpoint rows a reach sees: those among which `writeEvents` picks the receivers of an event, read in the same
 * round trip as what the event is about (a lifecycle event: src/domain/webhooks/lifecycle.ts).
 */
export const endpointRows = (reach: Reach): Read<WebhookEndpoint[]> =>
  read(endpointsWithin({ reach: reachArgument(reach) }), (rows) => rows);

/**
 * `GET /webhooks` (a partner's scope: its own side): the registered endpoints, without the listening sessions' (docs/
 * decisions.md, Listening from a laptop), which receive as their side's endpoints do but are the CLI's, not the
 * partner's configuration.
 */
export const listEndpoints = (reach: Reach) =>
  mapRead(endpointRows(reach), (rows) => rows.filter((row) => !isListenerUrl(row.url)).map(toEndpointObject));

/** An endpoint of another business, or an id that is not one, is the same 404 as one that does not exist. */
export const endpointNotFound = () => notFound("No webhook endpoint with that id exists for this business.");

const ofBusiness = (businessId: string, id: number) =>
  and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.businessId, businessId));

/**
 * Why a partner's guarded change of an endpoint wrote nothing, read only then: the endpoint is on the partner's side
 * and the guard (`changeableBy`, with the same `events`) kept it: 403, saying why, since the partner sees it in its
 * list; else it is missing (404).
 */
export async function refusedChange(
  deps: Dependencies,
  reach: SqlReach,
  id: number,
  events?: string[],
): Promise<never> {
  const guard = changeableBy(deps.db, reach, events);
  const kept = guard
    ? await deps.db
        .select({ id: webhookEndpoints.id })
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.id, id), reached(webhookEndpoints, reach), not(guard)))
        .get()
    : undefined;
  throw kept ? anotherKeysAnswers() : endpointNotFound();
}

/**
 * Deleting an endpoint deletes its pending deliveries with it (cascade): the consumer then finds nothing to send.
 * A partner deletes on its own side, but not an endpoint carrying another key's intake answers; the owner anywhere in
 * the business.
 */
export async function deleteEndpoint(deps: Dependencies, reach: SqlReach, id: number) {
  const deleted = await deps.db
    .delete(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, id), reached(webhookEndpoints, reach), changeableBy(deps.db, reach)))
    .returning({ id: webhookEndpoints.id });
  if (deleted.length === 0) await refusedChange(deps, reach, id);
}

export async function findEndpoint(deps: Dependencies, businessId: string, id: number) {
  const endpoint = await deps.db.select().from(webhookEndpoints).where(ofBusiness(businessId, id)).get();
  if (!endpoint) throw endpointNotFound();
  return endpoint;
}

/** What `PATCH /webhooks/{id}` may change: the members the partner chose at creation (at least one, by its schema). */
export type EndpointChanges = { url?: string; events?: string[]; description?: string };

/**
 * `PATCH /webhooks/{id}` (docs/webhooks.md, Reading and changing an endpoint): the url checked as on creation, then
 * ONE statement setting only the members given, scoped in its WHERE by business and side, so an endpoint gone since
 * the credential was read is a 404, never written, and one carrying another key's intake answers a 403. Kept: the id,
 * the secrets, the health, the deliveries, whose next attempt reads the new url.
 */
export async function updateEndpoint(deps: Dependencies, reach: SqlReach, id: number, changes: EndpointChanges) {
  if (changes.url !== undefined) assertRegistrableUrl(deps.outbound, changes.url);
  const [endpoint] = await deps.db
    .update(webhookEndpoints)
    .set({
      ...(changes.url !== undefined && { url: changes.url }),
      // Folded as on creation.
      ...(changes.events !== undefined && { events: [...new Set(changes.events)] }),
      ...(changes.description !== undefined && { description: changes.description }),
    })
    // A listening session's endpoint keeps its `listen://` url and subscription: it is changed by a new session.
    .where(
      and(
        eq(webhookEndpoints.id, id),
        reached(webhookEndpoints, reach),
        isRegisteredEndpoint,
        changeableBy(deps.db, reach, changes.events),
      ),
    )
    .returning();
  if (!endpoint) return refusedChange(deps, reach, id, changes.events);
  return toEndpointObject(endpoint);
}
