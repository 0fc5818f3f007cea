import { and, eq, gte, sql } from "drizzle-orm";
import { type Read, readTwo } from "../../db/reads";
import { webhookDeliveries } from "../../db/schema";
import { type Bound, runStatements, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { notFound } from "../../lib/api-error";
import { type EpochMs, iso } from "../../lib/time";
import type { Principal } from "../access/principals";
import { type Reach, reachArgument, sideOf } from "../access/scope";
import { takeSend } from "./endpoint-budgets";
import type { WebhookEndpoint } from "./endpoints";
import { keptSince } from "./event-log";
import { receivableDelivery } from "./intake-answers";
import {
  assertSendable,
  type EndpointArguments,
  endpointWithin,
  reachedEndpointId,
  sendableEndpointId,
} from "./sendable-endpoint";

export const deliveryNotFound = () => notFound("No delivery with that id exists for this webhook endpoint.");

type DeliveryArguments = EndpointArguments & { delivery: number; kept: string };

/**
 * The delivery `delivery` of the endpoint within reach, kept (30 days), of an event the reach could have received: one
 * that can be sent again.
 */
const deliveryWithin = statement<DeliveryArguments>()((db, { reach, endpoint, delivery, kept }) =>
  db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.id, delivery),
        eq(webhookDeliveries.endpointId, reachedEndpointId(db, { reach, endpoint })),
        gte(webhookDeliveries.createdAt, kept),
        receivableDelivery(db, reach),
      ),
    ),
);

/**
 * The partner's redelivery: one extra attempt owed by the delivery itself, from now, written only while the endpoint
 * is within reach and enabled and the delivery is one of its kept ones. Whatever its status: a delivered one is sent
 * once more too (a receiver that lost what it stored). Asked again while one is owed, it stays one; asked while one
 * is being made, it is owed once more (the attempt under way leaves it: attempts.ts, `extraAttemptRecorded`).
 */
const extraAttemptAsked = statement<DeliveryArguments & { now: string }>()(
  (db, { reach, endpoint, delivery, kept, now }) =>
    db
      .update(webhookDeliveries)
      .set({ extraAttemptAt: sql`${now}` })
      .where(
        and(
          eq(webhookDeliveries.id, delivery),
          eq(webhookDeliveries.endpointId, sendableEndpointId(db, { reach, endpoint })),
          gte(webhookDeliveries.createdAt, kept),
          receivableDelivery(db, reach),
        ),
      )
      .returning({ id: webhookDeliveries.id, eventId: webhookDeliveries.eventId }),
);

/**
 * What a partner's redelivery reads with its credential (one round trip), before it spends the endpoint's budget: the
 * endpoint (404 out of reach, 409 disabled) and the delivery (404), so that neither a mistyped id nor another side's
 * endpoint costs a send.
 */
export function deliveryToSendAgain(
  reach: Reach,
  endpointId: number,
  deliveryId: number,
  now: EpochMs,
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

export type SentDelivery = { id: number; eventId: string };

/**
 * ONE round trip: the write, scoped by reach, endpoint and retention, and the endpoint itself, which says why nothing
 * was written: the endpoint out of reach (404), disabled (409), or the delivery not one of its kept ones (404).
 */
async function writtenOrRefused(
  deps: Dependencies,
  write: (args: DeliveryArguments & { now: string }) => Bound<SentDelivery[]>,
  reach: Reach,
  endpointId: number,
  deliveryId: number,
  now: EpochMs,
): Promise<SentDelivery> {
  const endpoint = { reach: reachArgument(reach), endpoint: endpointId };
  const [written, endpoints] = (await runStatements(deps.db, [
    write({ ...endpoint, delivery: deliveryId, kept: keptSince(now), now: iso(now) }),
    endpointWithin(endpoint),
  ])) as [SentDelivery[], WebhookEndpoint[]];
  const [delivery] = written;
  if (delivery) {
    deps.enqueue([delivery.id]);
    return delivery;
  }
  assertSendable(endpoints[0]);
  throw deliveryNotFound();
}

/**
 * The owner's Send again (the dashboard: a business id, every side): ONE more attempt of the same delivery, as the
 * partner's redelivery makes (`redeliver`, below), without the partner's budget: the owner sees it in the same
 * delivery's history. It is enqueued after the answer (the outbox: the debt on the row first; a failed send is left
 * to the sweep).
 */
export function sendDeliveryAgain(
  deps: Dependencies,
  reach: Reach,
  endpointId: number,
  deliveryId: number,
  now: EpochMs = deps.clock(),
): Promise<SentDelivery> {
  return writtenOrRefused(deps, extraAttemptAsked, reach, endpointId, deliveryId, now);
}

/**
 * The partner's redelivery, once `deliveryToSendAgain` admitted it: the endpoint's budget (429), then ONE more attempt
 * of the SAME delivery, now, recorded among its attempts and starting no schedule (docs/decisions.md, Redeliver and
 * recover). The debt is written on the row (`extra_attempt_at`) before the id is enqueued after the answer, so a
 * failed send or a lost message is left to the sweep (`EXTRA_OWED_AFTER_MS`).
 */
export async function redeliver(
  deps: Dependencies,
  principal: Principal,
  endpointId: number,
  deliveryId: number,
  now: EpochMs = deps.clock(),
) {
  const budgets = await takeSend(deps, principal.business, endpointId);
  const delivery = await writtenOrRefused(deps, extraAttemptAsked, sideOf(principal), endpointId, deliveryId, now);
  return { delivery, budgets };
}
