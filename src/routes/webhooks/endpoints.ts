import { z } from "@hono/zod-openapi";
import { endpointNotFound } from "../../domain/webhooks/endpoints";
import {
  createEndpointOperation,
  deleteEndpointOperation,
  listEndpointsOperation,
} from "../../domain/webhooks/partner-api";
import { idOrNotFound, pathId } from "../../lib/validation";
import { EVENT_NAMES } from "../../names-and-limits";
import { errorResponses } from "../../schemas/errors";
import { CreatedWebhookEndpoint, CreateWebhookEndpointBody, WebhookEndpointObject } from "../../schemas/webhooks";
import { NO_INPUT, runOperation } from "../operation-runner";
import { createPartnerRouter, partnerRoute } from "../partner-router";

const listRoute = partnerRoute({
  method: "get",
  path: "/webhooks",
  operationId: "listWebhookEndpoints",
  summary: "Endpoints and event names",
  tags: ["Webhooks"],
  responses: {
    200: {
      description: "The business's endpoints, and every event name an endpoint can subscribe to",
      content: {
        "application/json": { schema: z.object({ data: z.array(WebhookEndpointObject), events: z.array(z.string()) }) },
      },
    },
    ...errorResponses(401, 403),
  },
});

const createRoute = partnerRoute({
  method: "post",
  path: "/webhooks",
  operationId: "createWebhookEndpoint",
  summary: "Subscribe an endpoint",
  tags: ["Webhooks"],
  request: { body: { required: true, content: { "application/json": { schema: CreateWebhookEndpointBody } } } },
  responses: {
    201: {
      description: "The endpoint, with its signing secret (shown once)",
      content: { "application/json": { schema: CreatedWebhookEndpoint } },
    },
    ...errorResponses(400, 401, 403),
  },
});

const deleteRoute = partnerRoute({
  method: "delete",
  path: "/webhooks/{id}",
  operationId: "deleteWebhookEndpoint",
  summary: "Unsubscribe an endpoint",
  tags: ["Webhooks"],
  request: { params: z.object({ id: pathId }) },
  responses: { 204: { description: "Deleted; its pending deliveries are not sent" }, ...errorResponses(401, 403, 404) },
});

export const webhooks = createPartnerRouter()
  .openapi(listRoute, (c) =>
    runOperation(c, listEndpointsOperation, NO_INPUT, (data) => c.json({ data, events: [...EVENT_NAMES] }, 200)),
  )
  .openapi(createRoute, (c) =>
    runOperation(
      c,
      createEndpointOperation,
      () => c.req.valid("json"),
      (endpoint) => c.json(endpoint, 201),
    ),
  )
  .openapi(deleteRoute, (c) =>
    runOperation(
      c,
      deleteEndpointOperation,
      () => idOrNotFound(c.req.valid("param").id, endpointNotFound),
      () => c.body(null, 204),
    ),
  );
