import { and, eq, inArray, isNotNull, sql } from "drizzle-orm";
import { isGuardAbort } from "../../db/d1-failures";
import { appEndpoints, businesses, events, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { guard } from "../../db/snapshot-guard";
import type { Dependencies } from "../../dependencies";
import type { Business } from "../access/businesses";
import { copiesOf, DISCONNECTED_REASON } from "./app-endpoints";
import type { WebhookEndpoint } from "./endpoints";
import type { EventDraft } from "./event-draft";
import { writeEvents } from "./outbox/write";

/*
 * An app's connections as its own endpoints hear of them (docs/guides/webhooks.md, Subscribing once as an app): an
 * approval copies the app's endpoints into the business and tells them `app.connected`; a disconnection tells them
 * `app.disconnected` and ends them, in its own batch. An ended copy is kept, disabled, so that the app's history of
 * the business stays readable; it gets nothing more until the owner connects the app again.
 */

/** The copies of the app connection `grantId`'s endpoints in the business. */
const copiesOfConnection = (businessId: string, grantId: number) =>
  and(
    eq(webhookEndpoints.businessId, businessId),
    eq(webhookEndpoints.oauthGrantId, grantId),
    isNotNull(webhookEndpoints.appEndpointId),
  );

/** Whether the connection `grantId` was told `app.connected` since `since`, the start of its connection period. */
const toldConnectedSince = (businessId: string, grantId: number, since: string) =>
  sql`exists (select 1 from ${events} where ${events.businessId} = ${businessId} and ${events.type} = 'app.connected'
    and ${events.createdAt} >= ${since} and ${events.audience} = ${`app:${grantId}`})`;

/**
 * An approval's aftermath in the business's shard: the app's endpoints copied in (a reconnection enables again the
 * copies its disconnection ended), then `app.connected` to the connection's side, once for the connection period that
 * began at `connectedAt` (an approval while connected begins none). Each part is idempotent: a failure is thrown, the
 * owner sees the approval fail and approves again, which copies what is missing and tells what was not told; a
 * guard in the event's batch keeps two approvals at once from telling it twice.
 */
export async function appConnected(
  deps: Dependencies,
  business: Business,
  connection: { clientId: string; grantId: number; connectedAt: string },
) {
  const { db } = deps;
  const { connectedAt, grantId } = connection;
  const endpoints = await deps.global.select().from(appEndpoints).where(eq(appEndpoints.clientId, connection.clientId));
  const told = toldConnectedSince(business.id, grantId, connectedAt);
  // One round trip: the copies that are missing, the ones a disconnection ended enabled again, then the side's
  // endpoints as they now are, and whether this connection period was told already.
  const [side, [toldAlready]] = (
    await db.batch([
      db
        .update(webhookEndpoints)
        .set({ status: "enabled", disabledReason: null })
        .where(and(copiesOfConnection(business.id, grantId), eq(webhookEndpoints.disabledReason, DISCONNECTED_REASON))),
      ...endpoints.map((endpoint) => copiesOf(db, endpoint, business.id)),
      db
        .select()
        .from(webhookEndpoints)
        .where(and(eq(webhookEndpoints.businessId, business.id), eq(webhookEndpoints.oauthGrantId, grantId))),
      db
        .select({ told: sql<number>`${told}` })
        .from(businesses)
        .where(eq(businesses.id, business.id)),
    ])
  ).slice(-2) as [WebhookEndpoint[], { told: number }[]];
  if (toldAlready?.told) return;
  const draft: EventDraft = {
    event: "app.connected",
    data: { connected_at: connectedAt },
    audience: { side: grantId },
  };
  try {
    const written = await writeEvents(deps, business, side, [draft], [guard(db, sql`not ${told}`)]);
    deps.enqueue(written.deliveryIds);
  } catch (error) {
    // Told meanwhile by an approval at the same moment.
    if (!isGuardAbort(error)) throw error;
  }
}

/**
 * A disconnection's part for the app's own endpoints, as statements of its batch around `app.disconnected` to them:
 * `before`, their deliveries still owed are dropped (pending ones deleted, owed extra attempts cleared), so that
 * nothing more of the business reaches the app; `after` the event's deliveries are written, the copies are ended.
 */
export function appCopiesEnded(deps: Dependencies, businessId: string, grantId: number, at: string) {
  const { db } = deps;
  const copies = db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(copiesOfConnection(businessId, grantId));
  const ofCopies = and(eq(webhookDeliveries.businessId, businessId), inArray(webhookDeliveries.endpointId, copies));
  return {
    draft: { event: "app.disconnected", data: { disconnected_at: at }, audience: { side: grantId } } as EventDraft,
    before: [
      db.delete(webhookDeliveries).where(and(ofCopies, eq(webhookDeliveries.status, "pending"))),
      db
        .update(webhookDeliveries)
        .set({ extraAttemptAt: null })
        .where(and(ofCopies, isNotNull(webhookDeliveries.extraAttemptAt))),
    ],
    after: [
      db
        .update(webhookEndpoints)
        .set({ status: "disabled", disabledReason: DISCONNECTED_REASON })
        .where(copiesOfConnection(businessId, grantId)),
    ],
    /** The copies as the batch's read gets them: those enabled receive `app.disconnected`. */
    copies: db.select().from(webhookEndpoints).where(copiesOfConnection(businessId, grantId)),
  };
}
