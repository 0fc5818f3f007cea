import { type ShardBindings, shardBinding } from "../../src/db/shard-bindings";
import { SHARD_NAMES, SHARDS, type ShardName } from "../../src/db/shards";

const SQL_OF = Symbol("sql");

type Recorded = D1PreparedStatement & { [SQL_OF]?: string };

/**
 * A database binding that records the SQL of every statement run on it, alone or in a batch, so that a test sees
 * which database each query of a request went to (docs/scaling.md, How a request finds its shard).
 */
function recordingD1(real: D1Database, seen: string[]): D1Database {
  const recorded = (statement: D1PreparedStatement, sql: string): Recorded =>
    new Proxy(statement, {
      get(target, property) {
        if (property === SQL_OF) return sql;
        const value = Reflect.get(target, property);
        if (typeof value !== "function") return value;
        if (property === "bind") return (...args: unknown[]) => recorded(value.apply(target, args), sql);
        if (["all", "raw", "first", "run"].includes(String(property))) {
          return (...args: unknown[]) => {
            seen.push(sql);
            return value.apply(target, args);
          };
        }
        return value.bind(target);
      },
    });
  return new Proxy(real, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === "prepare") return (sql: string) => recorded(value.call(target, sql), sql);
      if (property === "batch") {
        return (statements: Recorded[]) => {
          seen.push(...statements.map((statement) => statement[SQL_OF] ?? "?"));
          return value.call(target, statements);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Every database of the Worker recorded apart: the bindings to run a request on, and the SQL each database ran. */
export function recordingDatabases(env: ShardBindings) {
  const seen = Object.fromEntries(SHARD_NAMES.map((shard) => [shard, [] as string[]])) as Record<ShardName, string[]>;
  const bindings = Object.fromEntries(
    SHARD_NAMES.map((shard) => [SHARDS[shard].binding, recordingD1(shardBinding(env, shard), seen[shard])]),
  ) as ShardBindings;
  const clear = () => {
    for (const shard of SHARD_NAMES) seen[shard].length = 0;
  };
  return { bindings, seen, clear };
}

/** The tables a statement names (drizzle quotes them; raw statements of the service name them after these words). */
export function tablesOf(sql: string): string[] {
  return [...sql.matchAll(/\b(?:from|into|update|join)\s+"?([a-z_]+)"?/gi)].map((match) => match[1] ?? "");
}
