import { SHARDS, type ShardName } from "./shards";

/** The bindings of every database: `DB` (global, and the legacy shard) and each shard's (src/db/shards.ts). */
export type ShardBindings = { [Name in ShardName as (typeof SHARDS)[Name]["binding"]]: D1Database };

export const shardBinding = (env: ShardBindings, shard: ShardName): D1Database => env[SHARDS[shard].binding];
