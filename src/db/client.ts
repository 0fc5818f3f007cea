import { type DrizzleD1Database, drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Database = DrizzleD1Database<typeof schema> & { $client: D1Database };

declare const holds: unique symbol;

/**
 * The global database: the directory of businesses, owners' emails and OAuth clients' registrations
 * (src/db/schema/directory.ts). A different type from a shard's, although the legacy shard shares its binding, so
 * that a query meant for one cannot be given the other (docs/scaling.md, How a request finds its shard).
 */
export type GlobalDatabase = Database & { readonly [holds]: "the global tables" };

/** A shard's database: whole businesses (src/db/shards.ts). */
export type ShardDatabase = Database & { readonly [holds]: "businesses" };

const instances = new WeakMap<D1Database, Database>();

/** What a counting binding (`countingD1`) answers for its client: a view of its real binding's client. */
const COUNTED_CLIENT = Symbol("counted client");

/** The Drizzle client over a D1 binding, made once per binding rather than once per request. */
function database(d1: D1Database): Database {
  const counted = (d1 as D1Database & { [COUNTED_CLIENT]?: Database })[COUNTED_CLIENT];
  if (counted) return counted;
  let db = instances.get(d1);
  if (!db) {
    db = drizzle(d1, { schema });
    instances.set(d1, db);
  }
  return db;
}

/**
 * The real binding's client, reading through `d1`: its session (drizzle's query runner) is replaced, the rest
 * inherited. A new client per request would cost ~50 µs (drizzle extracts the schema's relations); this, under 1 µs.
 * Only `db.query`'s relational builders keep the real session, and the service does not use them.
 */
function clientThrough(d1: D1Database, real: D1Database): Database {
  const base = database(real) as Database & { session: object };
  const session = Object.create(base.session);
  session.client = d1;
  const db = Object.create(base);
  db.session = session;
  db.$client = d1;
  return db;
}

const EXECUTIONS = new Set<PropertyKey>(["all", "raw", "first", "run"]);

/**
 * A request's own view of the D1 binding, counting its round trips for the request's log line (docs/operations.md,
 * Reading the logs): a statement executed alone is one, a batch is one (as test/helpers/counting-d1.ts counts).
 * `database()` of it answers a client reading through it, so every query of the request is counted. Views sharing
 * one `counter` count together (the request's global database and its shard).
 */
export function countingD1(real: D1Database, counter = { trips: 0 }): { d1: D1Database; roundTrips: () => number } {
  let client: Database | undefined;
  const counted = (statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (typeof value !== "function") return value;
        if (property === "bind") return (...values: unknown[]) => counted(value.apply(target, values));
        if (!EXECUTIONS.has(property)) return value.bind(target);
        return (...args: unknown[]) => {
          counter.trips++;
          return value.apply(target, args);
        };
      },
    });
  const d1: D1Database = new Proxy(real, {
    get(target, property) {
      if (property === COUNTED_CLIENT) {
        client ??= clientThrough(d1, real);
        return client;
      }
      if (property === "prepare") return (query: string) => counted(target.prepare(query));
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          counter.trips++;
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { d1, roundTrips: () => counter.trips };
}

/** The global database's client over its binding (`DB`). */
export const globalDatabase = (d1: D1Database) => database(d1) as GlobalDatabase;

/** A shard's client over its binding (src/db/shard-bindings.ts). */
export const shardDatabase = (d1: D1Database) => database(d1) as ShardDatabase;
