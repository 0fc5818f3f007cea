import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import { database } from "../../db/client";
import { endpointDeliveries } from "../../domain/webhooks/delivery-log";
import { endpointNotFound } from "../../domain/webhooks/endpoints";
import { enqueueDeliveries } from "../../domain/webhooks/outbox/enqueue";
import { assertRecoverableSince, recoverDeliveries } from "../../domain/webhooks/recovery";
import { deliveryNotFound, deliveryToSendAgain, redeliver } from "../../domain/webhooks/redelivery";
import { sendableEndpoint } from "../../domain/webhooks/sendable-endpoint";
import { sendTestEvent } from "../../domain/webhooks/test-events";
import { type BudgetUse, rateLimitHeaders } from "../../lib/errors";
import { idOrNotFound, pathId } from "../../lib/validation";
import { readAsPartner } from "../../middleware/authenticate-partner";
import { errorResponses } from "../../schemas/errors";
import {
  DeliveriesPage,
  DeliveriesQuery,
  DeliveryPath,
  endpointDisabledResponse,
  RecoverBody,
  Recovery,
  Redelivery,
  TestEvent,
  TestEventBody,
} from "../../schemas/webhook-operations";
import { createPartnerRouter, json, partnerRoute } from "../partner-router";

const byEndpoint = { params: z.object({ id: pathId }) };

/** The path id as the domain takes it, or the endpoint's 404 (another side's id is the same 404). */
const endpointId = (text: string) => idOrNotFound(text, endpointNotFound);

const deliveriesRoute = partnerRoute({
  method: "get",
  path: "/webhooks/{id}/deliveries",
  operationId: "listWebhookDeliveries",
  summary: "An endpoint's deliveries of the last 30 days, newest first, each with its attempts",
  tags: ["Webhooks"],
  request: { ...byEndpoint, query: DeliveriesQuery },
  responses: {
    200: { description: "A page of deliveries", content: json(DeliveriesPage) },
    ...errorResponses(400, 401, 403, 404),
  },
});

const redeliverRoute = partnerRoute({
  method: "post",
  path: "/webhooks/{id}/deliveries/{delivery_id}/redeliver",
  operationId: "redeliverWebhookDelivery",
  summary: "Make one more attempt of a delivery, now",
  description:
    "One more attempt of the same delivery (the same X-Service-Delivery and envelope), signed afresh, recorded among its attempts. It starts no retry schedule: a failed delivery stays failed if it fails and is delivered if it succeeds; a pending one keeps its next attempt and the rest of its schedule, which a success ends. Redeliveries and test events: 60 an hour per endpoint.",
  tags: ["Webhooks"],
  request: { params: DeliveryPath },
  responses: {
    202: { description: "Queued", content: json(Redelivery) },
    ...errorResponses(401, 403, 404, 429),
    ...endpointDisabledResponse,
  },
});

const recoverRoute = partnerRoute({
  method: "post",
  path: "/webhooks/{id}/recover",
  operationId: "recoverWebhookDeliveries",
  summary: "Send now every delivery not delivered since a time",
  description:
    "Every delivery to the endpoint created since `since` that is not delivered is sent now: a failed one by one more attempt (as a redelivery), a pending one that has failed by its next scheduled attempt, its schedule going on from there. A pending one never attempted is already on its way and is not counted; nor is one whose attempt is already owed or under way. 5 an hour per endpoint.",
  tags: ["Webhooks"],
  request: { ...byEndpoint, body: { required: true, content: json(RecoverBody) } },
  responses: {
    202: { description: "Queued", content: json(Recovery) },
    ...errorResponses(400, 401, 403, 404, 429),
    ...endpointDisabledResponse,
  },
});

const testRoute = partnerRoute({
  method: "post",
  path: "/webhooks/{id}/test",
  operationId: "sendWebhookTestEvent",
  summary: "Send a signed sample event to the endpoint",
  description:
    'A realistic sample of the event type, with "test": true in its envelope, to this endpoint only, whatever it subscribed to. Counted with redeliveries: 60 an hour per endpoint; and 60 test events an hour per business, which re-creating an endpoint does not renew.',
  tags: ["Webhooks"],
  request: { ...byEndpoint, body: { required: false, content: json(TestEventBody) } },
  responses: {
    202: { description: "Queued", content: json(TestEvent) },
    ...errorResponses(400, 401, 403, 404, 429),
    ...endpointDisabledResponse,
  },
});

/**
 * After the write, the answer: the deliveries are enqueued once it has gone (`waitUntil`), so the partner waits for
 * two round trips only (the credential with the endpoint, then the write). What they owe is in the outbox already
 * (a new row, an extra attempt, a next attempt brought forward): a failed send is logged and left to the sweep
 * (docs/webhooks.md, How delivery works inside; src/domain/webhooks/outbox/sweep.ts). The budget left goes in the RateLimit
 * headers.
 */
function queued(c: Context<AppEnv>, deliveryIds: number[], budget: BudgetUse) {
  c.executionCtx.waitUntil(enqueueDeliveries(c.env.WEBHOOK_DELIVERIES, database(c.env.DB), deliveryIds));
  for (const [name, value] of Object.entries(rateLimitHeaders(budget))) c.header(name, value);
}

/**
 * The deliveries of one endpoint (list, redeliver, recover) and test events (docs/webhooks.md, Operating your
 * integration).
 */
export const webhookOperations = createPartnerRouter()
  .openapi(deliveriesRoute, async (c) => {
    const { status, limit, starting_after } = c.req.valid("query");
    const page = await readAsPartner(c, (scope) =>
      endpointDeliveries(scope, endpointId(c.req.valid("param").id), { status, limit, startingAfter: starting_after }),
    );
    return c.json({ data: page.deliveries, has_more: page.hasMore }, 200);
  })
  .openapi(redeliverRoute, async (c) => {
    const { id, delivery_id } = c.req.valid("param");
    const { endpoint, deliveryId } = await readAsPartner(c, (scope) =>
      deliveryToSendAgain(scope, endpointId(id), idOrNotFound(delivery_id, deliveryNotFound)),
    );
    const db = database(c.env.DB);
    const { delivery, budget } = await redeliver(c.env.BUSINESS_LIMITS, db, c.var.principal, endpoint.id, deliveryId);
    queued(c, [delivery.id], budget);
    return c.json({ delivery_id: delivery.id, event_id: delivery.eventId }, 202);
  })
  .openapi(recoverRoute, async (c) => {
    const { since } = c.req.valid("json");
    const endpoint = await readAsPartner(c, (scope) => {
      assertRecoverableSince(since);
      return sendableEndpoint(scope, endpointId(c.req.valid("param").id));
    });
    const db = database(c.env.DB);
    const { deliveryIds, budget } = await recoverDeliveries(
      c.env.BUSINESS_LIMITS,
      db,
      c.var.principal,
      endpoint.id,
      since,
    );
    queued(c, deliveryIds, budget);
    return c.json({ queued: deliveryIds.length }, 202);
  })
  .openapi(testRoute, async (c) => {
    // The body is optional: without one, or without `event`, the sample is a ping (docs/webhooks.md, Test events).
    const event = c.req.valid("json").event ?? "ping";
    const endpoint = await readAsPartner(c, (scope) => sendableEndpoint(scope, endpointId(c.req.valid("param").id)));
    const db = database(c.env.DB);
    const { eventId, deliveryIds, budget } = await sendTestEvent(
      c.env.BUSINESS_LIMITS,
      db,
      c.var.principal,
      endpoint,
      event,
    );
    queued(c, deliveryIds, budget);
    return c.json({ event_id: eventId }, 202);
  });
