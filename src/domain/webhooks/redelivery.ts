import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { notFound } from "../../lib/errors";
import { isoNow } from "../../lib/time";
import type { DeliveryQueue } from "../../queues/delivery-message";
import { enqueueDeliveries } from "./events";

export const deliveryNotFound = () => notFound("No delivery with that id exists for this webhook endpoint.");

/**
 * The owner's "Send again" on a delivery of an endpoint's history (DESIGN.md, dashboard: "each delivery in an
 * endpoint's history shows its attempts and can be sent again"): a NEW delivery of the same event to the same
 * endpoint, pending and due now with no attempt yet, so that the original keeps its own attempts (and, if pending,
 * its schedule) and the history shows the two apart. It goes through the outbox like any delivery (DESIGN.md,
 * Outbox): the row first, then the queue; a failed send is left to the sweep. The row is copied from the original
 * in one statement, scoped by the business and the endpoint: a delivery of another business or endpoint, or one gone
 * with its endpoint meanwhile, copies nothing and is the 404. Answers the new delivery's id.
 */
export async function sendDeliveryAgain(
  queue: DeliveryQueue,
  db: Database,
  businessId: string,
  endpointId: number,
  deliveryId: number,
) {
  const now = isoNow();
  const original = and(
    eq(webhookDeliveries.id, deliveryId),
    eq(webhookDeliveries.endpointId, endpointId),
    eq(webhookDeliveries.businessId, businessId),
  );
  // Every column in the table's order (id, business, event, endpoint, status, attempt_count, next_attempt_at,
  // enqueued_at, lease_until, completed_at, created_at): the original's three ids, then a fresh pending delivery.
  const [copy] = await db
    .insert(webhookDeliveries)
    .select(
      sql`select null, ${webhookDeliveries.businessId}, ${webhookDeliveries.eventId}, ${webhookDeliveries.endpointId}, 'pending', 0, ${now}, null, null, null, ${now} from ${webhookDeliveries} where ${original}`,
    )
    .returning({ id: webhookDeliveries.id });
  if (!copy) throw deliveryNotFound();
  await enqueueDeliveries(queue, db, [copy.id]);
  return { deliveryId: copy.id };
}
