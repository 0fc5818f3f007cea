import { applyD1Migrations, env } from "cloudflare:test";
import { afterEach, beforeEach, expect } from "vitest";
import { idSlotStatements } from "../src/db/ids";
import { shardBinding } from "../src/db/shard-bindings";
import { SHARD_NAMES } from "../src/db/shards";
import { takeServerErrors, watchWorker } from "./helpers/server-errors";
import "./helpers/status-matcher";

// Files share a runtime and its storage (vitest.config.ts): the migrations apply once to every database (the global
// one, which is also the legacy shard, and each regional shard), and are skipped after that.
for (const shard of SHARD_NAMES) {
  const d1 = shardBinding(env, shard);
  await applyD1Migrations(d1, env.TEST_MIGRATIONS);
  const slots = idSlotStatements(shard);
  if (slots.length > 0) await d1.batch(slots.map((statement) => d1.prepare(statement)));
}

// A 5xx or an uncaught error fails the test it happened in, unless the test names that it expects one.
watchWorker();
beforeEach(() => {
  takeServerErrors();
});
afterEach(({ task }) => {
  const { seen, expected } = takeServerErrors();
  if (!expected) expect(seen, "the Worker answered 5xx or logged an uncaught error").toEqual([]);
  // The error lines of a fault produced on purpose are printed only when the test fails, to explain it.
  else if (task.result?.state === "fail" && seen.length > 0) console.warn(seen.join("\n"));
});
