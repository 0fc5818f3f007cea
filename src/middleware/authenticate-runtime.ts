import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { tokenPresented } from "./bearer-token";

/**
 * `/internal/v1` is for the Secretary runtime and the core platform only (docs/decisions.md, The Secretary runtime
 * API): `Authorization: Bearer <RUNTIME_TOKEN>`, or during its rotation `RUNTIME_TOKEN_PREVIOUS`
 * (docs/operations.md, Rotating RUNTIME_TOKEN), compared as src/middleware/bearer-token.ts says. The operator token
 * opens none of these routes, only the move (src/middleware/authenticate-operator.ts).
 */
export const requireRuntime = createMiddleware<AppEnv>(async (c, next) => {
  const secret = { current: c.env.RUNTIME_TOKEN, previous: c.env.RUNTIME_TOKEN_PREVIOUS };
  c.set("runtime", tokenPresented(c, secret, "The runtime token is missing or not valid."));
  await next();
});
