import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import { spendRequestBudget } from "../admission/partner-admission";
import type { AppEnv } from "../app-env";
import { appConnections } from "../domain/oauth/app-connections";
import { appOfToken } from "../domain/oauth/app-tokens";
import { queryInteger, rejectInvalid } from "../lib/validation";
import { errorResponses } from "../schemas/error-body";
import { json } from "./partner-router";

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

const AppConnection = z
  .object({
    id: z.string().openapi({ description: "The business's id" }),
    handle: z.string(),
    name: z.string(),
    connectedAt: z.string().openapi({ description: "When its owner connected the app" }),
  })
  .openapi("AppConnection");

const connectionsRoute = createRoute({
  method: "get",
  path: "/app/connections",
  operationId: "listAppConnections",
  summary: "The businesses connected to the app",
  description:
    "With the app's own access token (client credentials, scope `app`): the businesses whose owners have the app connected, by business id, for reconciling a platform's list.",
  tags: ["Apps"],
  security: [{ bearerAuth: [] }],
  middleware: [appCredential] as const,
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

/** `/api/v1/app`: what an app reads as itself, across the businesses connected to it. */
export const appApi = new OpenAPIHono<AppEnv>({ defaultHook: rejectInvalid }).openapi(connectionsRoute, async (c) => {
  const { limit, starting_after } = c.req.valid("query");
  const page = await appConnections(c.var.globalDeps, c.var.app.id, { limit, startingAfter: starting_after });
  return c.json({ data: page.data, has_more: page.hasMore }, 200);
});
