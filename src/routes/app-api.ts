import { z } from "@hono/zod-openapi";
import { appConnections } from "../domain/oauth/app-connections";
import {
  appEndpointNotFound,
  createAppEndpoint,
  deleteAppEndpoint,
  enableAppEndpoint,
  getAppEndpoint,
  listAppEndpoints,
} from "../domain/webhooks/app-endpoints";
import { outboundPolicy } from "../lib/outbound";
import { idOrNotFound, pathId, queryInteger } from "../lib/validation";
import { errorResponses } from "../schemas/error-body";
import { CreateWebhookEndpointBody, WebhookEndpointObject } from "../schemas/webhooks";
import { appHistory } from "./app-history";
import { appListenSessions } from "./app-listen-sessions";
import { appRoute, createAppRouter } from "./app-router";
import { IGNORED_MEMBERS, json } from "./partner-router";

const AppConnection = z
  .object({
    id: z.string().openapi({ description: "The business's id" }),
    handle: z.string(),
    name: z.string(),
    connectedAt: z.string().openapi({ description: "When its owner connected the app" }),
  })
  .openapi("AppConnection");

const connectionsRoute = appRoute({
  method: "get",
  path: "/app/connections",
  operationId: "listAppConnections",
  summary: "The businesses connected to the app",
  description:
    "With the app's own access token (client credentials, scope `app`): the businesses whose owners have the app connected, by business id, for reconciling a platform's list.",
  request: {
    query: z.object({
      limit: queryInteger({ min: 1, max: 100, default: 25 }),
      starting_after: z
        .string()
        .min(1)
        .max(64)
        .optional()
        .openapi({ description: "The last business id of the page before" }),
    }),
  },
  responses: {
    200: {
      description: "A page of connections",
      content: json(z.object({ data: z.array(AppConnection), has_more: z.boolean() })),
    },
    ...errorResponses(400, 401, 429),
  },
});

const AppEndpoint = WebhookEndpointObject.pick({
  id: true,
  url: true,
  events: true,
  description: true,
  created_at: true,
}).openapi("AppWebhookEndpoint");
const CreatedAppEndpoint = AppEndpoint.extend({
  secret: z
    .string()
    .openapi({ description: "Shown once: it keys the signature of every delivery, for every business" }),
}).openapi("CreatedAppWebhookEndpoint");

const byId = { params: z.object({ id: pathId }) };
const endpointId = (text: string) => idOrNotFound(text, appEndpointNotFound);

const createEndpointRoute = appRoute({
  method: "post",
  path: "/app/webhooks",
  operationId: "createAppWebhookEndpoint",
  summary: "Subscribe once for every connected business",
  description:
    "An endpoint of the app itself: every business connected to the app, now and later, delivers to it as to its own endpoints, each envelope naming the business. At most 20 per app.",
  request: { body: { required: true, content: json(CreateWebhookEndpointBody) } },
  responses: {
    201: {
      description: "The endpoint, with its signing secret (shown once)",
      headers: IGNORED_MEMBERS,
      content: json(CreatedAppEndpoint),
    },
    ...errorResponses(400, 401, 403, 429),
  },
});

const listEndpointsRoute = appRoute({
  method: "get",
  path: "/app/webhooks",
  operationId: "listAppWebhookEndpoints",
  summary: "The app's own endpoints",
  responses: {
    200: { description: "The endpoints", content: json(z.object({ data: z.array(AppEndpoint) })) },
    ...errorResponses(401, 429),
  },
});

const getEndpointRoute = appRoute({
  method: "get",
  path: "/app/webhooks/{id}",
  operationId: "getAppWebhookEndpoint",
  summary: "One of the app's own endpoints",
  request: byId,
  responses: { 200: { description: "The endpoint", content: json(AppEndpoint) }, ...errorResponses(401, 404, 429) },
});

const deleteEndpointRoute = appRoute({
  method: "delete",
  path: "/app/webhooks/{id}",
  operationId: "deleteAppWebhookEndpoint",
  summary: "Remove one of the app's own endpoints",
  request: byId,
  responses: {
    204: { description: "Removed from every business, with its deliveries" },
    ...errorResponses(401, 404, 429),
  },
});

const enableEndpointRoute = appRoute({
  method: "post",
  path: "/app/webhooks/{id}/enable",
  operationId: "enableAppWebhookEndpoint",
  summary: "Enable every business's copy that endpoint health disabled",
  description:
    "Each business's copy of the endpoint is disabled on its own by endpoint health (a 410, or 3 days of failures). This enables every such copy at once; a business that disconnected the app stays ended. Then recover from the time they were disabled.",
  request: byId,
  responses: {
    200: {
      description: "How many businesses' copies were enabled",
      content: json(z.object({ enabled: z.number().int() })),
    },
    ...errorResponses(401, 404, 429),
  },
});

/** `/api/v1/app`: what an app reads and subscribes to as itself, across the businesses connected to it. */
export const appApi = createAppRouter()
  .openapi(connectionsRoute, async (c) => {
    const { limit, starting_after } = c.req.valid("query");
    const page = await appConnections(c.var.globalDeps, c.var.app.id, { limit, startingAfter: starting_after });
    return c.json({ data: page.data, has_more: page.hasMore }, 200);
  })
  .openapi(createEndpointRoute, async (c) => {
    const deps = { ...c.var.globalDeps, outbound: outboundPolicy(c.env) };
    return c.json(await createAppEndpoint(deps, c.var.app.id, c.req.valid("json")), 201);
  })
  .openapi(listEndpointsRoute, async (c) =>
    c.json({ data: await listAppEndpoints(c.var.globalDeps, c.var.app.id) }, 200),
  )
  .openapi(getEndpointRoute, async (c) =>
    c.json(await getAppEndpoint(c.var.globalDeps, c.var.app.id, endpointId(c.req.valid("param").id)), 200),
  )
  .openapi(deleteEndpointRoute, async (c) => {
    await deleteAppEndpoint(c.var.globalDeps, c.var.app.id, endpointId(c.req.valid("param").id));
    return c.body(null, 204);
  })
  .openapi(enableEndpointRoute, async (c) =>
    c.json(await enableAppEndpoint(c.var.globalDeps, c.var.app.id, endpointId(c.req.valid("param").id)), 200),
  )
  .route("/", appHistory)
  .route("/", appListenSessions);
