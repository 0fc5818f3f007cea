import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { shardForRuntime } from "../domain/access/runtime-shard";
import { useShard } from "./request-dependencies";

/**
 * Every `/internal/v1/businesses/{id}/…` route runs on the shard of the business in its path (docs/scaling.md, How a
 * request finds its shard): a GET only reads, any other method writes and is refused while the business moves
 * (src/domain/access/runtime-shard.ts). After the runtime token: a caller without it learns nothing of the directory.
 */
export const runtimeBusinessShard = createMiddleware<AppEnv>(async (c, next) => {
  const access = c.req.method === "GET" || c.req.method === "HEAD" ? "read" : "write";
  useShard(c, await shardForRuntime(c.var.globalDeps.global, c.req.param("id") ?? "", access));
  await next();
});
