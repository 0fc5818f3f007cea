import { type ShardBindings, shardBinding } from "../../src/db/shard-bindings";
import { SHARD_NAMES, SHARDS } from "../../src/db/shards";

/**
 * Wraps the real D1 binding to count round trips: every statement executed, and every batch, is one trip to D1.
 * The app runs unchanged on top of it. Bindings wrapped with one `trips` list count together (every database).
 */
export function countingD1(real: D1Database, trips: string[] = []) {
  const wrapStatement = (statement: D1PreparedStatement, sql: string): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (property === "bind") return (...args: unknown[]) => wrapStatement(value.apply(target, args), sql);
        if (["all", "raw", "first", "run"].includes(String(property))) {
          return (...args: unknown[]) => {
            trips.push(sql);
            return value.apply(target, args);
          };
        }
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  const d1 = new Proxy(real, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === "prepare") return (sql: string) => wrapStatement(value.call(target, sql), sql);
      if (property === "batch") {
        return (statements: D1PreparedStatement[]) => {
          trips.push(`batch of ${statements.length}`);
          return value.call(target, statements);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { d1, trips };
}

/** Every database of the Worker (the global one and each shard) counted together: the bindings, and their trips. */
export function countingShards(env: ShardBindings) {
  const trips: string[] = [];
  const bindings = Object.fromEntries(
    SHARD_NAMES.map((shard) => [SHARDS[shard].binding, countingD1(shardBinding(env, shard), trips).d1]),
  ) as ShardBindings;
  return { bindings, trips };
}
