import { and, eq, gte, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type Read, readTwo } from "../../db/reads";
import { webhookDeliveries } from "../../db/schema";
import { type Placeheld, runStatements, statement } from "../../db/statements";
import type { BusinessLimits } from "../../durable-objects/business-limits";
import { notFound } from "../../lib/errors";
import { type EpochMs, iso } from "../../lib/time";
import type { Principal } from "../access/principals";
import { type ReadReach, reachArgument, scopeOf } from "../access/scope";
import { newDeliveryColumns } from "./deliveries";
import { takeSend } from "./endpoint-budgets";
import type { WebhookEndpoint } from "./endpoints";
import { keptSince } from "./event-log";
import {
  assertSendable,
  type EndpointArguments,
  endpointWithin,
  reachedEndpointId,
  sendableEndpointId,
} from "./sendable-endpoint";

export const deliveryNotFound = () => notFound("No delivery with that id exists for this webhook endpoint.");

type DeliveryArguments = EndpointArguments & { delivery: number; kept: string };

/** The delivery `delivery` of the endpoint within reach, kept (30 days): one that can be sent again. */
const deliveryWithin = statement<DeliveryArguments>()((db, { reach, endpoint, delivery, kept }) =>
  db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.id, delivery),
        eq(webhookDeliveries.endpointId, reachedEndpointId(db, { reach, endpoint })),
        gte(webhookDeliveries.createdAt, kept),
      ),
    ),
);

type CopyArguments = EndpointArguments & { kept: string; now: string };

/**
 * New deliveries (`newDeliveryColumns`) of the events of the endpoint's kept deliveries that `which` picks, selected
 * only while the endpoint is within reach and enabled and only from deliveries still kept (30 days): the select of
 * the INSERT ... SELECT of a redelivery (one delivery) and of a recover (every failed one: recovery.ts).
 */
export const copiesOf = (db: Database, { reach, endpoint, kept, now }: Placeheld<CopyArguments>, ...which: SQL[]) =>
  db
    .select(newDeliveryColumns(webhookDeliveries, now))
    .from(webhookDeliveries)
    .where(
      and(
        ...which,
        eq(webhookDeliveries.endpointId, sendableEndpointId(db, { reach, endpoint })),
        gte(webhookDeliveries.createdAt, kept),
      ),
    );

/** The copy, written only while the endpoint is within reach and enabled and the original is one of its kept ones. */
const copyOf = statement<DeliveryArguments & { now: string }>()((db, { delivery, ...copy }) =>
  db
    .insert(webhookDeliveries)
    .select(copiesOf(db, copy, eq(webhookDeliveries.id, delivery)))
    .returning({ id: webhookDeliveries.id, eventId: webhookDeliveries.eventId }),
);

/**
 * What a partner's redelivery reads with its credential (one round trip), before it spends the endpoint's budget: the
 * endpoint (404 out of reach, 409 disabled) and the delivery (404), so that neither a mistyped id nor another side's
 * endpoint costs a send.
 */
export function deliveryToSendAgain(
  reach: ReadReach,
  endpointId: number,
  deliveryId: number,
  now: EpochMs = Date.now(),
): Read<{ endpoint: WebhookEndpoint; deliveryId: number }> {
  const endpoint = { reach: reachArgument(reach), endpoint: endpointId };
  return readTwo(
    endpointWithin(endpoint),
    deliveryWithin({ ...endpoint, delivery: deliveryId, kept: keptSince(now) }),
    ([row], [delivery]) => {
      const sendable = assertSendable(row);
      if (!delivery) throw deliveryNotFound();
      return { endpoint: sendable, deliveryId: delivery.id };
    },
  );
}

export type NewDelivery = { id: number; eventId: string };

/**
 * Send again, the owner's (the dashboard: a business id, every side) and the partner's (`POST
 * /webhooks/{id}/deliveries/{delivery_id}/redeliver`: its own side): a NEW delivery of the same event to the same
 * endpoint, pending and due now, so that the original keeps its attempts and, while pending, its schedule (DESIGN.md:
 * "outside the retry schedule (a pending delivery keeps its schedule)"), and the history shows the two apart. The
 * envelope is the event's, so its `id` is the same; each attempt is signed afresh by the consumer. Like any delivery
 * it is retried on the schedule if it fails (spec: "It is signed and retried like every event"). The caller enqueues
 * it (the outbox: the row first; a failed send is left to the sweep).
 *
 * ONE round trip: the copy, scoped by reach, endpoint and retention, and the endpoint itself, which says why nothing
 * was copied: the endpoint out of reach (404), disabled (409), or the delivery not one of its kept ones (404).
 */
export async function sendDeliveryAgain(
  db: Database,
  reach: ReadReach,
  endpointId: number,
  deliveryId: number,
  now: EpochMs = Date.now(),
): Promise<NewDelivery> {
  const endpoint = { reach: reachArgument(reach), endpoint: endpointId };
  const [copies, endpoints] = (await runStatements(db, [
    copyOf({ ...endpoint, delivery: deliveryId, kept: keptSince(now), now: iso(now) }),
    endpointWithin(endpoint),
  ])) as [NewDelivery[], WebhookEndpoint[]];
  const [copy] = copies;
  if (copy) return copy;
  assertSendable(endpoints[0]);
  throw deliveryNotFound();
}

/** The partner's redelivery, once `deliveryToSendAgain` has admitted it: the endpoint's budget (429), then the copy. */
export async function redeliver(
  limits: DurableObjectNamespace<BusinessLimits>,
  db: Database,
  principal: Principal,
  endpointId: number,
  deliveryId: number,
) {
  const budget = await takeSend(limits, principal.business.id, endpointId);
  return { delivery: await sendDeliveryAgain(db, scopeOf(principal), endpointId, deliveryId), budget };
}
