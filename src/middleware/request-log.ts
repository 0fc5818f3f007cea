import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import { matchedRoutes } from "hono/route";
import type { AppEnv } from "../app-env";
import { countingD1 } from "../db/client";
import { shardBinding } from "../db/shard-bindings";
import { SHARD_NAMES, SHARDS } from "../db/shards";
import type { OwnerSession } from "../domain/access/owner-sign-in";
import { logLine } from "../lib/log";
import { useGlobal } from "./request-dependencies";

/**
 * Who the request was admitted as: a partner principal, the owner signed in to the dashboard, the runtime, or an
 * operator moving a business (1 for the current token, 2 for the previous one during a rotation).
 */
function principalOf(c: Context<AppEnv & { Variables: { session?: OwnerSession } }>) {
  const { principal, session, runtime, operator } = c.var;
  if (runtime) return { principal: "runtime" as const, principalId: runtime === "current" ? 1 : 2 };
  if (operator) return { principal: "operator" as const, principalId: operator === "current" ? 1 : 2 };
  if (principal)
    return {
      principal: principal.kind,
      principalId: principal.kind === "api_key" ? principal.apiKeyId : principal.grantId,
    };
  return session
    ? { principal: "owner" as const, principalId: session.ownerId }
    : { principal: null, principalId: null };
}

/**
 * The pattern of the request's route (`/api/v1/webhooks/:id`), even when middleware refused it before its handler:
 * the last matched handler's, as middleware (`use`, method ALL) may be matched after it (the dashboard's session
 * check is); when no handler matched (a 404 or 405), the last middleware's (`/api/v1/*`).
 */
function routeOf(c: Context) {
  const routes = matchedRoutes(c);
  return (routes.findLast((route) => route.method !== "ALL") ?? routes.at(-1))?.path ?? "";
}

/**
 * One line per request (docs/operations.md, Reading the logs), written once the answer is made, errors and 404s
 * included (`app.onError` and `app.notFound` answer inside `next`). The request reads D1 through a counting view of
 * the binding (db/client.ts), which the request's dependencies (src/dependencies.ts) are built on, so the line can say how many round trips it made; work left to `waitUntil` after the
 * answer is not counted.
 */
export const requestLog = createMiddleware<AppEnv>(async (c, next) => {
  const startedAt = Date.now();
  const counter = { trips: 0 };
  const counted = SHARD_NAMES.map((shard) => [
    SHARDS[shard].binding,
    countingD1(shardBinding(c.env, shard), counter).d1,
  ]);
  c.env = { ...c.env, ...Object.fromEntries(counted) };
  useGlobal(c);
  await next();
  logLine("request", {
    requestId: c.var.requestId,
    method: c.req.method,
    route: routeOf(c),
    ...principalOf(c),
    status: c.res.status,
    durationMs: Date.now() - startedAt,
    d1RoundTrips: counter.trips,
  });
});
