// The service's own code for the scripts, so that nothing is written twice: the password hashing
// (src/lib/password.ts), the form of an API key and the limit on them (src/domain/access/api-key-format.ts), the
// hashes of credentials (src/lib/secrets.ts), the shards and where a new business goes (src/db/shards.ts), the demo
// bookings, orders and texts (src/domain/sandbox/demo-data.ts) and the drizzle schema (src/db/schema/index.ts), whose
// statements the seed renders as SQL text for `wrangler d1 execute` (`sqlText`).
//
// src/ imports its modules without an extension (`./columns`), as the bundler resolves them; Node does not. The
// resolve hook below tries `.ts` and `/index.ts` for a relative import Node cannot find, and the modules are then
// imported dynamically, after it is registered (a static import would be resolved before any code here runs).
import { registerHooks } from "node:module";
import type { SQLWrapper } from "drizzle-orm";
import { SQLiteSyncDialect } from "drizzle-orm/sqlite-core";
import { drizzle } from "drizzle-orm/sqlite-proxy";

const UNRESOLVED = new Set(["ERR_MODULE_NOT_FOUND", "ERR_UNSUPPORTED_DIR_IMPORT"]);

registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (!/^\.\.?\//.test(specifier) || !code || !UNRESOLVED.has(code)) throw error;
      for (const suffix of [".ts", "/index.ts"]) {
        try {
          return nextResolve(`${specifier}${suffix}`, context);
        } catch {
          // Not this one.
        }
      }
      throw error;
    }
  },
});

export const { hashPassword, PASSWORD_ITERATIONS } = await import("../src/lib/password.ts");
export const { API_KEY_PREFIX, MAX_ACTIVE_KEYS, newApiKey } = await import("../src/domain/access/api-key-format.ts");
export const { sha256Hex } = await import("../src/lib/secrets.ts");
export const { LEGACY_SHARD, SHARDS, isShardName, shardForCountry } = await import("../src/db/shards.ts");
export const { selectedRowsIds } = await import("../src/db/ids.ts");
export type { ShardName } from "../src/db/shards.ts";
export const schema = await import("../src/db/schema/index.ts");
export const { DEMO_OWNER_SOURCE } = await import("../src/domain/sandbox/demo-data.ts");
export const { demoBookingRows, demoOrderRows, fill } = await import("../src/domain/sandbox/demo-rows.ts");

/**
 * A drizzle database that runs nothing: its statements are only rendered (`sqlText`), as the SQLite dialect that D1
 * speaks writes them.
 */
export const db = drizzle(async () => {
  throw new Error("scripts/service.ts renders statements as SQL text; it runs none.");
});

const dialect = new SQLiteSyncDialect();

/** One SQL literal. Strings have their single quotes doubled; booleans are 0/1. */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "boolean") return value ? "1" : "0";
  if (typeof value === "number" || typeof value === "bigint") {
    if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError(`Not a finite number: ${value}`);
    return String(value);
  }
  if (typeof value !== "string") throw new TypeError(`Not an SQL value: ${JSON.stringify(value)}`);
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * A drizzle statement as SQL text with its parameters written in as literals, for a file that `wrangler d1 execute`
 * runs (a `?` inside a quoted literal or identifier of the statement is left alone).
 */
export function sqlText(statement: { toSQL: () => { sql: string; params: unknown[] } } | SQLWrapper): string {
  const { sql, params } = "toSQL" in statement ? statement.toSQL() : dialect.sqlToQuery(statement.getSQL());
  let text = "";
  let quote: string | undefined;
  let next = 0;
  for (const char of sql) {
    if (quote) {
      if (char === quote) quote = undefined;
      text += char;
    } else if (char === "'" || char === '"' || char === "`") {
      quote = char;
      text += char;
    } else if (char === "?") {
      if (next >= params.length) throw new Error(`More placeholders than parameters in: ${sql}`);
      text += sqlLiteral(params[next++]);
    } else {
      text += char;
    }
  }
  if (next !== params.length) throw new Error(`More parameters than placeholders in: ${sql}`);
  return `${text};`;
}
