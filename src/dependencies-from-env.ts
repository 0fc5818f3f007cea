import { globalDatabase, shardDatabase } from "./db/client";
import { type ShardBindings, shardBinding } from "./db/shard-bindings";
import type { ShardName } from "./db/shards";
import type { Dependencies, DependenciesOfShard, GlobalDependencies } from "./dependencies";
import { enqueueDeliveries } from "./domain/webhooks/outbox/enqueue";
import type { BusinessLimits } from "./durable-objects/business-limits";
import { sessionObject } from "./durable-objects/jurisdictions";
import { type OutboundPolicy, outboundPolicy } from "./lib/outbound";
import type { Clock } from "./lib/time";
import type { DeliveryQueue } from "./queues/delivery-message";

/** The part of the Worker's bindings (src/env.ts) the domain works with (src/dependencies.ts). */
export type DomainBindings = ShardBindings & {
  WEBHOOK_DELIVERIES: DeliveryQueue;
  BUSINESS_LIMITS: DurableObjectNamespace<BusinessLimits>;
  LISTENING_SESSIONS: Cloudflare.Env["LISTENING_SESSIONS"];
  ALLOW_LOOPBACK_URLS: string;
  LOCAL_DURABLE_OBJECT_JURISDICTIONS?: string;
  DOH_RESOLVER_URL: string;
  SERVICE_NAME: string;
  BASE_URL: string;
};

/**
 * What one unit of work (a request, a queue batch, a cron run, a Durable Object call) has before it knows a business's
 * shard, from the Worker's bindings. `waitUntil` is the unit's own: the deliveries it writes are enqueued after its
 * answer.
 */
export function globalDependencies(
  env: DomainBindings,
  waitUntil: (work: Promise<unknown>) => void,
  clock: Clock = Date.now,
): GlobalDependencies {
  return {
    global: globalDatabase(env.DB),
    clock,
    baseUrl: env.BASE_URL,
    onShard: (shard) => dependenciesFromEnv(env, waitUntil, { shard, clock }),
  };
}

/**
 * The dependencies of one unit of work for the businesses of `shard`, once that is known: there is no default. Its
 * outbound policy, with the unit's connection slots, is its own unless the unit shares one across shards.
 */
export function dependenciesFromEnv(
  env: DomainBindings,
  waitUntil: (work: Promise<unknown>) => void,
  {
    shard,
    clock = Date.now,
    outbound = outboundPolicy(env),
  }: { shard: ShardName; clock?: Clock; outbound?: OutboundPolicy },
): Dependencies {
  const deps: Dependencies = {
    ...globalDependencies(env, waitUntil, clock),
    shard,
    db: shardDatabase(shardBinding(env, shard)),
    queue: env.WEBHOOK_DELIVERIES,
    limits: env.BUSINESS_LIMITS,
    listener: (sessionId) => sessionObject(env, sessionId),
    outbound,
    enqueue: (deliveryIds) => {
      if (deliveryIds.length > 0) waitUntil(enqueueDeliveries(deps, deliveryIds));
    },
    afterAnswer: waitUntil,
  };
  return deps;
}

/**
 * Every shard's dependencies for one unit of work that spans them (a queue batch, a cron run), on the same bindings,
 * with one outbound policy: the invocation's 6 connections are shared by all its shards' sends.
 */
export function dependenciesOfShards(
  env: DomainBindings,
  waitUntil: (work: Promise<unknown>) => void,
  clock?: Clock,
): DependenciesOfShard {
  const outbound = outboundPolicy(env);
  return (shard) => dependenciesFromEnv(env, waitUntil, { shard, clock, outbound });
}
