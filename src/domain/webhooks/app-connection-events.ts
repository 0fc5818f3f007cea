import { and, eq, inArray, isNotNull } from "drizzle-orm";
import { appEndpoints, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import type { Business } from "../access/businesses";
import { copiesOf, DISCONNECTED_REASON } from "./app-endpoints";
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

/**
 * An approval's aftermath in the business's shard: the app's endpoints copied in (a reconnection enables again the
 * copies its disconnection ended), then, when the approval began a connection (`connectedAt`, null when the app was
 * connected already), `app.connected` to the connection's side. A failure is thrown: the owner sees the approval
 * fail and approves again, which copies what is missing; the event is written once, with the connection.
 */
export async function appConnected(
  deps: Dependencies,
  business: Business,
  connection: { clientId: string; grantId: number; connectedAt: string | null },
) {
  const { db } = deps;
  const endpoints = await deps.global.select().from(appEndpoints).where(eq(appEndpoints.clientId, connection.clientId));
  const { connectedAt, grantId } = connection;
  await Promise.all(endpoints.map((endpoint) => copiesOf(db, endpoint, business.id)));
  if (connectedAt === null) return;
  const [, side] = await db.batch([
    // A reconnection: the copies its disconnection ended receive again.
    db
      .update(webhookEndpoints)
      .set({ status: "enabled", disabledReason: null })
      .where(copiesOfConnection(business.id, grantId)),
    db
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.businessId, business.id), eq(webhookEndpoints.oauthGrantId, grantId))),
  ]);
  const draft: EventDraft = {
    event: "app.connected",
    data: { connected_at: connectedAt },
    audience: { side: grantId },
  };
  const written = await writeEvents(deps, business, side, [draft]);
  deps.enqueue(written.deliveryIds);
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
