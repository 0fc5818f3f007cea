import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import type { ShardName } from "../db/shards";
import { globalDependencies } from "../dependencies-from-env";

/**
 * What the request has before it knows a business's shard, on the request's counted databases: set first, for every
 * request (src/middleware/request-log.ts).
 */
export function useGlobal(c: Context<AppEnv>): void {
  c.set(
    "globalDeps",
    globalDependencies(c.env, (work) => c.executionCtx.waitUntil(work)),
  );
}

/**
 * The request's dependencies (src/dependencies.ts) for the businesses of `shard`, for the rest of the request: set
 * once the request's shard is known (from its credential, its session or its path's business; docs/scaling.md, How a
 * request finds its shard), and never before.
 */
export function useShard(c: Context<AppEnv>, shard: ShardName): void {
  c.set("deps", c.var.globalDeps.onShard(shard));
}
