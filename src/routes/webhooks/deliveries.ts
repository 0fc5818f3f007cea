import { z } from "@hono/zod-openapi";
import { announceBudgets, runOperation } from "../../admission/partner-admission";
import { endpointNotFound } from "../../domain/webhooks/endpoints";
import { deliveryNotFound } from "../../domain/webhooks/redelivery";
import {
  listDeliveriesOperation,
  recoverOperation,
  redeliverOperation,
  testEventOperation,
} from "../../domain/webhooks/webhook-operations";
import { idOrNotFound, pathId } from "../../lib/validation";
import { errorResponses } from "../../schemas/error-body";
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
 * The deliveries of one endpoint (list, redeliver, recover) and test events (docs/webhooks.md, Operating your
 * integration). A send answers once its row is written: the queue takes it after the answer, and what the queue
 * could not take the outbox sweep sends (docs/architecture.md, The outbox).
 */
export const webhookOperations = createPartnerRouter()
  .openapi(deliveriesRoute, (c) =>
    runOperation(
      c,
      listDeliveriesOperation,
      () => {
        const { status, limit, starting_after } = c.req.valid("query");
        return { id: endpointId(c.req.valid("param").id), filters: { status, limit, startingAfter: starting_after } };
      },
      (page) => c.json({ data: page.deliveries, has_more: page.hasMore }, 200),
    ),
  )
  .openapi(redeliverRoute, (c) =>
    runOperation(
      c,
      redeliverOperation,
      () => {
        const { id, delivery_id } = c.req.valid("param");
        return { id: endpointId(id), deliveryId: idOrNotFound(delivery_id, deliveryNotFound) };
      },
      ({ delivery, budgets }) => {
        announceBudgets(c, budgets);
        return c.json({ delivery_id: delivery.id, event_id: delivery.eventId }, 202);
      },
    ),
  )
  .openapi(recoverRoute, (c) =>
    runOperation(
      c,
      recoverOperation,
      () => ({ id: endpointId(c.req.valid("param").id), since: c.req.valid("json").since }),
      ({ deliveryIds, budgets }) => {
        announceBudgets(c, budgets);
        return c.json({ queued: deliveryIds.length }, 202);
      },
    ),
  )
  .openapi(testRoute, (c) =>
    runOperation(
      c,
      testEventOperation,
      // The body is optional: without one, or without `event`, the sample is a ping (docs/webhooks.md, Test events).
      () => ({ id: endpointId(c.req.valid("param").id), event: c.req.valid("json").event ?? "ping" }),
      ({ eventId, budgets }) => {
        announceBudgets(c, budgets);
        return c.json({ event_id: eventId }, 202);
      },
    ),
  );
