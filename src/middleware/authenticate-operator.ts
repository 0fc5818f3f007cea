import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { tokenPresented } from "./bearer-token";

/**
 * Moving a business between shards is the operators' alone (docs/operations.md, Moving a business):
 * `Authorization: Bearer <OPERATOR_TOKEN>`, or during its rotation `OPERATOR_TOKEN_PREVIOUS`, compared as
 * src/middleware/bearer-token.ts says. The runtime token is refused here: whoever holds it runs the Secretary, not the
 * databases.
 */
export const requireOperator = createMiddleware<AppEnv>(async (c, next) => {
  const secret = { current: c.env.OPERATOR_TOKEN, previous: c.env.OPERATOR_TOKEN_PREVIOUS };
  c.set("operator", tokenPresented(c, secret, "The operator token is missing or not valid."));
  await next();
});
