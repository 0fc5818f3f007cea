import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { database } from "../db/client";
import { assertPlanIncludesApi } from "../domain/access/businesses";
import { authenticatePartner } from "../domain/access/principals";

/**
 * Every `/api/v1` call (spec: Authentication, and "When the plan lapses, calls return 403"): one D1 round trip that
 * finds the credential and its business together, then the plan rule, then the principal for the handler.
 */
export const requirePartner = createMiddleware<AppEnv>(async (c, next) => {
  const principal = await authenticatePartner(database(c.env.DB), c.req.header("Authorization"));
  assertPlanIncludesApi(principal.business);
  c.set("principal", principal);
  await next();
});
