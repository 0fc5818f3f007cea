import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import type { ShardName } from "../db/shards";
import { dependenciesFromEnv } from "../dependencies-from-env";

/**
 * The request's dependencies (src/dependencies.ts) for the businesses of `shard`, on the request's counted databases,
 * for the rest of the request: set first for the legacy shard, then again once the request's shard is known (from its
 * credential, its session or its path's business; docs/scaling.md, How a request finds its shard).
 */
export function useShard(c: Context<AppEnv>, shard: ShardName): void {
  c.set(
    "deps",
    dependenciesFromEnv(c.env, (work) => c.executionCtx.waitUntil(work), { shard }),
  );
}
