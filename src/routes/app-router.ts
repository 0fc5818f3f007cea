import { createRoute, OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { spendRequestBudget } from "../admission/partner-admission";
import type { AppEnv } from "../app-env";
import { appOfToken } from "../domain/oauth/app-tokens";
import { announceIgnored } from "../lib/ignored-members";
import { rejectInvalid } from "../lib/validation";

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
export const appRoute = <const Config extends Omit<Parameters<typeof createRoute>[0], "middleware" | "security">>(
  config: Config,
) => createRoute({ ...config, tags: ["Apps"], security: [{ bearerAuth: [] }], middleware: [appCredential] as const });

/**
 * A body or query the schema refuses is the 400 every route answers; a body it takes names what it ignored
 * (docs/guides/errors.md, Unknown members). The token was checked before, by the route's middleware.
 */
const appHook = async (result: Parameters<typeof rejectInvalid>[0], c: Context): Promise<undefined> => {
  if (!result.success) return rejectInvalid(result, c);
  // The body as sent: hono keeps its text, so this parses it again, as every partner route does.
  if (result.target === "json") announceIgnored(c, await c.req.json().catch(() => undefined), result.data);
};

/** A router of the app's routes (`/api/v1/app`: src/routes/app-api.ts, src/routes/app-history.ts). */
export const createAppRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: appHook });
