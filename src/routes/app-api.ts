import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { spendRequestBudget } from "../admission/partner-admission";
import type { AppEnv } from "../app-env";
import { appConnections } from "../domain/oauth/app-connections";
import { appOfToken } from "../domain/oauth/app-tokens";
import {
  appEndpointNotFound,
  createAppEndpoint,
  deleteAppEndpoint,
  getAppEndpoint,
  listAppEndpoints,
} from "../domain/webhooks/app-endpoints";
import { announceIgnored } from "../lib/ignored-members";
import { outboundPolicy } from "../lib/outbound";
import { idOrNotFound, pathId, queryInteger, rejectInvalid } from "../lib/validation";
import { errorResponses } from "../schemas/error-body";
import { CreateWebhookEndpointBody, WebhookEndpointObject } from "../schemas/webhooks";
import { IGNORED_MEMBERS, json } from "./partner-router";

/**
 * The app's token, checked before anything else (a 401 before a 400), then its request budget, as a partner
 * credential's (docs/guides/oauth.md, The app as itself).
 */
const appCredential = createMiddleware<AppEnv>(async (c, next) => {
  const deps = c.var.globalDeps;
  const app = await appOfToken(deps.global, c.req.header("Authorization"), deps.clock());
  await spendRequestBudget(c, `app:${app.id}`);
  c.set("app", app);
  await next();
});

/** An app's route (docs/guides/webhooks.md, Subscribing once as an app): its token first, as the connections'. */
const appRoute = <const Config extends Omit<Parameters<typeof createRoute>[0], "middleware" | "security">>(
  config: Config,
) => createRoute({ ...config, tags: ["Apps"], security: [{ bearerAuth: [] }], middleware: [appCredential] as const });

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

/**
 * A body or query the schema refuses is the 400 every route answers; a body it takes names what it ignored
 * (docs/guides/errors.md, Unknown members). The token was checked before, by the route's middleware.
 */
const appHook = async (result: Parameters<typeof rejectInvalid>[0], c: Context): Promise<undefined> => {
  if (!result.success) return rejectInvalid(result, c);
  // The body as sent: hono keeps its text, so this parses it again, as every partner route does.
  if (result.target === "json") announceIgnored(c, await c.req.json().catch(() => undefined), result.data);
};

/** `/api/v1/app`: what an app reads and subscribes to as itself, across the businesses connected to it. */
export const appApi = new OpenAPIHono<AppEnv>({ defaultHook: appHook })
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
  });
