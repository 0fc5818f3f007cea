import { z } from "@hono/zod-openapi";
import { NO_INPUT, runOperation } from "../../admission/partner-admission";
import { endpointNotFound } from "../../domain/webhooks/endpoints";
import {
  createEndpointOperation,
  deleteEndpointOperation,
  getEndpointOperation,
  listEndpointsOperation,
  updateEndpointOperation,
} from "../../domain/webhooks/webhook-operations";
import { idOrNotFound, pathId } from "../../lib/validation";
import { EVENT_NAMES } from "../../names-and-limits";
import { errorResponses } from "../../schemas/error-body";
import {
  CreatedWebhookEndpoint,
  CreateWebhookEndpointBody,
  PatchWebhookEndpointBody,
  WebhookEndpointObject,
} from "../../schemas/webhooks";
import { createPartnerRouter, json, partnerRoute } from "../partner-router";

/** The path id as the domain takes it, or the endpoint's 404: an id that is not one names nothing. */
const endpointId = (text: string) => idOrNotFound(text, endpointNotFound);

const byId = { params: z.object({ id: pathId }) };

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

const getRoute = partnerRoute({
  method: "get",
  path: "/webhooks/{id}",
  operationId: "getWebhookEndpoint",
  summary: "One endpoint",
  tags: ["Webhooks"],
  request: byId,
  responses: {
    200: { description: "The endpoint, as GET /webhooks lists it (no secret)", content: json(WebhookEndpointObject) },
    ...errorResponses(401, 403, 404),
  },
});

const patchRoute = partnerRoute({
  method: "patch",
  path: "/webhooks/{id}",
  operationId: "updateWebhookEndpoint",
  summary: "Change an endpoint",
  description:
    "Any of url, events and description, checked as on creation. The id, the secret (and a rotation's previous one), the status and the delivery history are kept. A pending delivery's next attempt goes to the new url; a new events list applies to events from now on (docs/webhooks.md, Reading and changing an endpoint).",
  tags: ["Webhooks"],
  request: { ...byId, body: { required: true, content: json(PatchWebhookEndpointBody) } },
  responses: {
    200: { description: "The endpoint as it now is", content: json(WebhookEndpointObject) },
    ...errorResponses(400, 401, 403, 404),
  },
});

const deleteRoute = partnerRoute({
  method: "delete",
  path: "/webhooks/{id}",
  operationId: "deleteWebhookEndpoint",
  summary: "Unsubscribe an endpoint",
  tags: ["Webhooks"],
  request: byId,
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
  .openapi(getRoute, (c) =>
    runOperation(
      c,
      getEndpointOperation,
      () => endpointId(c.req.valid("param").id),
      (endpoint) => c.json(endpoint, 200),
    ),
  )
  .openapi(patchRoute, (c) =>
    runOperation(
      c,
      updateEndpointOperation,
      () => ({ id: endpointId(c.req.valid("param").id), changes: c.req.valid("json") }),
      (endpoint) => c.json(endpoint, 200),
    ),
  )
  .openapi(deleteRoute, (c) =>
    runOperation(
      c,
      deleteEndpointOperation,
      () => endpointId(c.req.valid("param").id),
      () => c.body(null, 204),
    ),
  );
