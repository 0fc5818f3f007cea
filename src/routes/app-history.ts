import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { announceBudgets } from "../admission/partner-admission";
import type { AppEnv } from "../app-env";
import { appEndpointNotFound } from "../domain/webhooks/app-endpoints";
import { appEvents } from "../domain/webhooks/app-events";
import { appEndpointDeliveries } from "../domain/webhooks/app-history";
import { recoverAppDeliveries, redeliverAppDelivery } from "../domain/webhooks/app-resends";
import { assertRecoverableSince } from "../domain/webhooks/recovery";
import { deliveryNotFound } from "../domain/webhooks/redelivery";
import { idOrNotFound, pathId } from "../lib/validation";
import { ErrorBody, errorResponses } from "../schemas/error-body";
import {
  DeliveriesQuery,
  DeliveryObject,
  DeliveryPath,
  EventsPage,
  EventsQuery,
  RecoverBody,
  Recovery,
  Redelivery,
} from "../schemas/webhook-operations";
import { appRoute, createAppRouter } from "./app-router";
import { envelopesPage } from "./events";
import { IGNORED_MEMBERS, json } from "./partner-router";

/** One business connected to the app, by id: its history alone. */
const business = z
  .string()
  .min(1)
  .max(64)
  .optional()
  .openapi({ description: "A business's id (GET /app/connections): only its history; none if it has no copy" });

const AppDelivery = DeliveryObject.extend({
  business_id: z.string().openapi({ description: "The business whose event it delivers" }),
}).openapi("AppDelivery");

const byEndpoint = { params: z.object({ id: pathId }) };

/** The app's endpoint by its path id, or its 404 (another app's id is the same 404). */
const endpointId = (text: string) => idOrNotFound(text, appEndpointNotFound);

/** A send to a business's copy that its owner's disconnection disabled. */
const copyDisabled = {
  409: {
    description:
      "The business's copy of the endpoint is disabled: endpoint health disabled it (POST /app/webhooks/{id}/enable), or its owner disconnected the app",
    content: json(ErrorBody),
  },
} as const;

const deliveriesRoute = appRoute({
  method: "get",
  path: "/app/webhooks/{id}/deliveries",
  operationId: "listAppWebhookDeliveries",
  summary: "An app endpoint's deliveries in every business, newest first",
  description:
    "The deliveries of the last 30 days to the endpoint's copies in every business connected to the app, each with its attempts and its business's id.",
  request: { ...byEndpoint, query: DeliveriesQuery.extend({ business }) },
  responses: {
    200: {
      description: "A page of deliveries",
      content: json(z.object({ data: z.array(AppDelivery), has_more: z.boolean() }).openapi("AppDeliveriesPage")),
    },
    ...errorResponses(400, 401, 404, 429),
  },
});

const redeliverRoute = appRoute({
  method: "post",
  path: "/app/webhooks/{id}/deliveries/{delivery_id}/redeliver",
  operationId: "redeliverAppWebhookDelivery",
  summary: "Make one more attempt of an app endpoint's delivery, now",
  description:
    "As POST /webhooks/{id}/deliveries/{delivery_id}/redeliver, for a delivery of any business. 60 an hour per app endpoint, all businesses together.",
  request: { params: DeliveryPath },
  responses: {
    202: { description: "Queued", content: json(Redelivery) },
    ...errorResponses(401, 404, 429),
    ...copyDisabled,
  },
});

const recoverRoute = appRoute({
  method: "post",
  path: "/app/webhooks/{id}/recover",
  operationId: "recoverAppWebhookDeliveries",
  summary: "Send now every delivery of an app endpoint not delivered since a time",
  description:
    "As POST /webhooks/{id}/recover, for the endpoint's copies in every business connected to the app (or in `business`). 5 an hour per app endpoint.",
  request: {
    ...byEndpoint,
    body: { required: true, content: json(RecoverBody.extend({ business }).openapi("RecoverAppDeliveries")) },
  },
  responses: {
    202: { description: "Queued", headers: IGNORED_MEMBERS, content: json(Recovery) },
    ...errorResponses(400, 401, 404, 429),
    ...copyDisabled,
  },
});

const eventsRoute = appRoute({
  method: "get",
  path: "/app/events",
  operationId: "listAppEvents",
  summary: "Events sent to the app's endpoints, newest first",
  description:
    "The envelopes of the last 30 days delivered to the app's own endpoints, from every business connected to it, each once, exactly as delivered.",
  request: { query: EventsQuery.extend({ business }) },
  responses: {
    200: { description: "A page of envelopes, each exactly as delivered", content: json(EventsPage) },
    ...errorResponses(400, 401, 429),
  },
});

/** What a send counts its budgets with, besides the shards: the budgets' objects. */
const withLimits = (c: Context<AppEnv>) => ({ ...c.var.globalDeps, limits: c.env.BUSINESS_LIMITS });

/**
 * `/api/v1/app`: an app endpoint's history across the businesses connected to the app (docs/guides/webhooks.md,
 * Subscribing once as an app), as each business's endpoint has its own.
 */
export const appHistory = createAppRouter()
  .openapi(deliveriesRoute, async (c) => {
    const { business, status, limit, starting_after } = c.req.valid("query");
    const filters = { business, status, limit, startingAfter: starting_after };
    const page = await appEndpointDeliveries(
      c.var.globalDeps,
      c.var.app.id,
      endpointId(c.req.valid("param").id),
      filters,
    );
    return c.json({ data: page.data, has_more: page.hasMore }, 200);
  })
  .openapi(redeliverRoute, async (c) => {
    const { id, delivery_id } = c.req.valid("param");
    const { delivery, budgets } = await redeliverAppDelivery(
      withLimits(c),
      c.var.app.id,
      endpointId(id),
      idOrNotFound(delivery_id, deliveryNotFound),
    );
    announceBudgets(c, budgets);
    return c.json({ delivery_id: delivery.id, event_id: delivery.eventId }, 202);
  })
  .openapi(recoverRoute, async (c) => {
    const { since, business } = c.req.valid("json");
    assertRecoverableSince(since, c.var.globalDeps.clock());
    const id = endpointId(c.req.valid("param").id);
    const { queued, budgets } = await recoverAppDeliveries(withLimits(c), c.var.app.id, id, { since, business });
    announceBudgets(c, budgets);
    return c.json({ queued }, 202);
  })
  .openapi(eventsRoute, async (c) => {
    const { business, type, limit, starting_after } = c.req.valid("query");
    const page = await appEvents(c.var.globalDeps, c.var.app.id, {
      business,
      type,
      limit,
      startingAfter: starting_after,
    });
    return envelopesPage(c, page);
  });
