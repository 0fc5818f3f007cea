import type { GlobalDatabase, ShardDatabase } from "./db/client";
import type { ShardName } from "./db/shards";
import type { BusinessLimits } from "./durable-objects/business-limits";
import type { OutboundPolicy } from "./lib/outbound";
import type { Clock } from "./lib/time";
import type { DeliveryQueue } from "./queues/delivery-message";

/**
 * What a unit of work has before it knows a business's shard (a request without a credential of a business yet, a
 * cron run's global chores): the global database, the clock, and the way to a shard's dependencies once the shard is
 * known. There is no default shard (docs/scaling.md, How a request finds its shard).
 */
export type GlobalDependencies = {
  /** The global database: the directory of businesses, owners' emails, OAuth clients (src/db/schema/directory.ts). */
  global: GlobalDatabase;
  clock: Clock;
  /** BASE_URL: the OAuth issuer and the partner API's resource identifier come from it (domain/oauth/discovery.ts). */
  baseUrl: string;
  /** This unit of work's dependencies for the businesses of `shard`. */
  onShard: (shard: ShardName) => Dependencies;
};

/**
 * What the domain works with besides its arguments (docs/architecture.md, Dependencies): built once per request, per
 * queue batch, per cron run and per Durable Object call from the Worker's bindings (src/dependencies-from-env.ts), once
 * the shard of the business it is for is known, and passed first to every domain function that reads or writes D1,
 * enqueues, counts a budget, calls out or tells time.
 */
export type Dependencies = GlobalDependencies & {
  /** The shard of the business this unit of work is for (src/db/shards.ts), and its database. */
  shard: ShardName;
  db: ShardDatabase;
  queue: DeliveryQueue;
  /** The per-business budgets (src/durable-objects/business-limits.ts). */
  limits: DurableObjectNamespace<BusinessLimits>;
  /**
   * A listening session's object, in the jurisdiction its id names: the socket listener endpoints deliver through
   * (src/durable-objects/listening-session.ts, src/durable-objects/jurisdictions.ts).
   */
  listener: (sessionId: string) => ReturnType<Cloudflare.Env["LISTENING_SESSIONS"]["get"]>;
  /** What every outbound call is checked and signed with (src/lib/outbound.ts). */
  outbound: OutboundPolicy;
  /**
   * Hands the deliveries this unit of work wrote to the queue once its answer has gone (`waitUntil`): nothing waits
   * for the queue, and what it could not take the outbox sweep sends (docs/architecture.md, The outbox).
   */
  enqueue: (deliveryIds: number[]) => void;
  /** Work nobody waits for, kept alive after the answer (`waitUntil`): the end of an MCP session (lib/mcp-client.ts). */
  afterAnswer: (work: Promise<unknown>) => void;
};

/**
 * The dependencies of each shard, for a unit of work that spans them (a queue batch, a cron run): each shard's work
 * runs on its own database (docs/scaling.md, The queue, the consumer and the cron).
 */
export type DependenciesOfShard = (shard: ShardName) => Dependencies;
