import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { unauthorized } from "../lib/errors";
import { secretsEqual } from "../lib/secrets";

/**
 * `/internal/v1` is for the Secretary runtime and the core platform only (DESIGN.md, Secretary runtime API):
 * `Authorization: Bearer <RUNTIME_TOKEN>`, compared in constant time. An unset token refuses everything.
 */
export const requireRuntime = createMiddleware<AppEnv>(async (c, next) => {
  const expected = c.env.RUNTIME_TOKEN;
  const presented = /^Bearer +(\S+)$/i.exec(c.req.header("Authorization")?.trim() ?? "")?.[1];
  if (!expected || !presented || !secretsEqual(presented, expected)) {
    throw unauthorized("The runtime token is missing or not valid.");
  }
  c.set("runtime", true);
  await next();
});
