import { database } from "./db/client";
import { type ShardBindings, shardBinding } from "./db/shard-bindings";
import { LEGACY_SHARD, type ShardName } from "./db/shards";
import type { Dependencies, DependenciesOfShard } from "./dependencies";
import { enqueueDeliveries } from "./domain/webhooks/outbox/enqueue";
import type { BusinessLimits } from "./durable-objects/business-limits";
import type { ListeningSession } from "./durable-objects/listening-session";
import { outboundPolicy } from "./lib/outbound";
import type { Clock } from "./lib/time";
import type { DeliveryQueue } from "./queues/delivery-message";

/** The part of the Worker's bindings (src/env.ts) the domain works with (src/dependencies.ts). */
export type DomainBindings = ShardBindings & {
  WEBHOOK_DELIVERIES: DeliveryQueue;
  BUSINESS_LIMITS: DurableObjectNamespace<BusinessLimits>;
  LISTENING_SESSIONS: DurableObjectNamespace<ListeningSession>;
  ALLOW_LOOPBACK_URLS: string;
  DOH_RESOLVER_URL: string;
  SERVICE_NAME: string;
  BASE_URL: string;
};

/**
 * The dependencies of one unit of work (a request, a queue batch, a cron run, a Durable Object call) for the businesses
 * of one shard, from the Worker's bindings. `waitUntil` is the unit's own: the deliveries it writes are enqueued after
 * its answer.
 */
export function dependenciesFromEnv(
  env: DomainBindings,
  waitUntil: (work: Promise<unknown>) => void,
  { shard = LEGACY_SHARD, clock = Date.now }: { shard?: ShardName; clock?: Clock } = {},
): Dependencies {
  const deps: Dependencies = {
    shard,
    db: database(shardBinding(env, shard)),
    global: database(env.DB),
    queue: env.WEBHOOK_DELIVERIES,
    limits: env.BUSINESS_LIMITS,
    listeners: env.LISTENING_SESSIONS,
    outbound: outboundPolicy(env),
    clock,
    enqueue: (deliveryIds) => {
      if (deliveryIds.length > 0) waitUntil(enqueueDeliveries(deps, deliveryIds));
    },
    onShard: (other) => dependenciesFromEnv(env, waitUntil, { shard: other, clock }),
  };
  return deps;
}

/** Every shard's dependencies for one unit of work that spans them (a queue batch, a cron run), on the same bindings. */
export const dependenciesOfShards =
  (env: DomainBindings, waitUntil: (work: Promise<unknown>) => void, clock?: Clock): DependenciesOfShard =>
  (shard) =>
    dependenciesFromEnv(env, waitUntil, { shard, clock });
