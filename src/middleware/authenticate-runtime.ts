import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { unauthorized } from "../lib/errors";
import { secretsEqual } from "../lib/secrets";

/**
 * `/internal/v1` is for the Secretary runtime and the core platform only (docs/decisions.md, The Secretary runtime
 * API): `Authorization: Bearer <RUNTIME_TOKEN>`, compared in constant time. While the token is rotated, the one before
 * it (`RUNTIME_TOKEN_PREVIOUS`) is accepted too, so that callers move to the new one without a refused request
 * (docs/operations.md, Rotating RUNTIME_TOKEN); both are always compared, so the time taken does not tell which
 * matched. An unset token refuses everything.
 */
export const requireRuntime = createMiddleware<AppEnv>(async (c, next) => {
  const presented = /^Bearer +(\S+)$/i.exec(c.req.header("Authorization")?.trim() ?? "")?.[1];
  const { RUNTIME_TOKEN: current, RUNTIME_TOKEN_PREVIOUS: previous } = c.env;
  const matches = (current ? [current, previous] : []).map(
    (token) => !!token && !!presented && secretsEqual(presented, token),
  );
  const matched = matches.indexOf(true);
  if (matched < 0) {
    throw unauthorized(
      "The runtime token is missing or not valid.",
      presented === undefined ? "authentication_required" : "invalid_credential",
    );
  }
  c.set("runtime", matched === 0 ? "current" : "previous");
  await next();
});
