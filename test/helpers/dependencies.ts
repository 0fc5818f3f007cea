import { env } from "cloudflare:workers";
import type { ShardBindings } from "../../src/db/shard-bindings";
import type { ShardName } from "../../src/db/shards";
import type { Dependencies } from "../../src/dependencies";
import { dependenciesFromEnv, dependenciesOfShards } from "../../src/dependencies-from-env";
import { DEFAULT_SHARD } from "./fixtures";

/**
 * The dependencies of a test's direct domain calls for a business in `shard` (src/dependencies.ts): the real bindings
 * of the test's runtime, each part replaceable (a racing database, a driven clock). The deliveries a call writes go to
 * the queue at once.
 */
export function testDependencies(shard: ShardName, parts: Partial<Dependencies> = {}): Dependencies {
  return { ...dependenciesFromEnv(env, (work) => work, { shard }), ...parts };
}

/** The dependencies of a test's direct domain calls for a business of the fixtures' default shard. */
export const deps = testDependencies(DEFAULT_SHARD);

/** The dependencies of a business in `shard` (src/db/shards.ts), for a test's direct domain calls. */
export const shardDependencies = (shard: ShardName) => dependenciesFromEnv(env, (work) => work, { shard });

/**
 * Every shard's dependencies for a unit of work that spans them (a queue batch), on the test's bindings with some
 * replaced (a counting or failing database), at a driven clock.
 */
export const testDependenciesOfShards = ({
  bindings,
  clock,
}: {
  bindings?: Partial<ShardBindings>;
  clock?: () => number;
}) => dependenciesOfShards({ ...env, ...bindings }, (work) => work, clock);
