import { and, asc, count, eq } from "drizzle-orm";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { creatorColumns, withCreator } from "../access/creators";
import { notEndedCopy } from "./app-endpoints";
import { endpointNotFound } from "./endpoints";
import { isRegisteredEndpoint } from "./listener-endpoints";

/*
 * The owner's side of webhook endpoints (docs/architecture.md, Principals and owner sides): scoped by the business
 * alone, since the owner may remove any webhook endpoint, whoever created it.
 */

/**
 * What the owner's list and endpoint page show: the endpoint, its health (docs/webhooks.md, Endpoint health), its
 * creator.
 */
const endpointColumns = {
  id: webhookEndpoints.id,
  url: webhookEndpoints.url,
  events: webhookEndpoints.events,
  description: webhookEndpoints.description,
  status: webhookEndpoints.status,
  disabledReason: webhookEndpoints.disabledReason,
  lastSuccessAt: webhookEndpoints.lastSuccessAt,
  oauthGrantId: webhookEndpoints.oauthGrantId,
  ...creatorColumns(webhookEndpoints.oauthGrantId),
};

/**
 * Every endpoint of the business, whoever subscribed it, with its creator: one range of the (business, side) index.
 * Not the listening sessions' (docs/decisions.md, Listening from a laptop): a partner's laptop for a few minutes.
 */
export async function listEndpointsForOwner(deps: Dependencies, businessId: string) {
  const rows = await deps.db
    .select(endpointColumns)
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.businessId, businessId), isRegisteredEndpoint, notEndedCopy))
    .orderBy(asc(webhookEndpoints.id));
  return rows.map(withCreator);
}

/**
 * One endpoint of the business with its creator and how many of its deliveries are still pending: what removing it
 * would stop (its deliveries go with it, so the consumer finds nothing to send: docs/architecture.md, The outbox). The
 * 404 for an endpoint of another business or an id that is none.
 */
export async function endpointForOwner(deps: Dependencies, businessId: string, id: number) {
  const { db } = deps;
  const [[endpoint], [pending]] = await db.batch([
    db
      .select(endpointColumns)
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.businessId, businessId), notEndedCopy)),
    db
      .select({ count: count() })
      .from(webhookDeliveries)
      .where(
        and(
          eq(webhookDeliveries.endpointId, id),
          eq(webhookDeliveries.businessId, businessId),
          eq(webhookDeliveries.status, "pending"),
        ),
      ),
  ]);
  if (!endpoint) throw endpointNotFound();
  return { ...withCreator(endpoint), pendingDeliveries: pending?.count ?? 0 };
}
