import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { database } from "../db/client";
import { endpointDeliveries } from "../domain/webhooks/delivery-log";
import { endpointNotFound } from "../domain/webhooks/endpoints";
import { enqueueDeliveries } from "../domain/webhooks/events";
import { assertRecoverableSince, recoverDeliveries } from "../domain/webhooks/recovery";
import { deliveryNotFound, deliveryToSendAgain, redeliver } from "../domain/webhooks/redelivery";
import { sendableEndpoint } from "../domain/webhooks/sendable-endpoint";
import { sendTestEvent } from "../domain/webhooks/test-events";
import { type BudgetUse, rateLimitHeaders } from "../lib/errors";
import { idOrNotFound, pathId } from "../lib/validation";
import { readAsPartner } from "../middleware/authenticate-partner";
import { errorResponses } from "../schemas/errors";
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
} from "../schemas/webhook-operations";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

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
  summary: "Send a delivery's event again, now",
  description:
    "A new delivery of the same envelope (same id) to the endpoint, signed afresh and retried like any other; the original keeps its attempts and schedule. Redeliveries and test events: 60 an hour per endpoint.",
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
  summary: "Send again every delivery that failed since a time",
  description:
    "One new delivery per event whose delivery to the endpoint failed since `since` and has not been delivered or queued again since. 5 an hour per endpoint.",
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
    'A realistic sample of the event type, with "test": true in its envelope, to this endpoint only, whatever it subscribed to. Counted with redeliveries: 60 an hour per endpoint.',
  tags: ["Webhooks"],
  request: { ...byEndpoint, body: { required: false, content: json(TestEventBody) } },
  responses: {
    202: { description: "Queued", content: json(TestEvent) },
    ...errorResponses(400, 401, 403, 404, 429),
    ...endpointDisabledResponse,
  },
});

/**
 * After the write, the answer: the new deliveries are enqueued once it has gone (`waitUntil`), so the partner waits
 * for two round trips only (the credential with the endpoint, then the write). They are in the outbox already: a
 * failed send is left to the sweep (DESIGN.md, Outbox). The budget left goes in the RateLimit headers.
 */
function queued(c: Context<AppEnv>, deliveryIds: number[], budget: BudgetUse) {
  c.executionCtx.waitUntil(enqueueDeliveries(c.env.WEBHOOK_DELIVERIES, database(c.env.DB), deliveryIds));
  for (const [name, value] of Object.entries(rateLimitHeaders(budget))) c.header(name, value);
}

/** DESIGN.md, Beyond the spec: Deliveries of one endpoint (list, redeliver, recover) and test events by API. */
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
    // The body is optional: without one, or without `event`, the sample is a ping (DESIGN.md, Test events by API).
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
