import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { shardBinding } from "../../src/db/shard-bindings";
import { SHARDS, type ShardName } from "../../src/db/shards";
import worker from "../../src/index";
import { countingD1 } from "./counting-d1";
import { DEFAULT_SHARD } from "./fixtures";
import { BASE } from "./http";

/**
 * A partner request through the Worker's fetch handler on a D1 that counts round trips (the shard's, the default
 * one's unless said): those made before the answer
 * (docs/architecture.md, Performance budget: a read makes one, a write at most two), and the answer itself. Work left
 * to `waitUntil` (the enqueue after a write) runs before this returns, but is not counted.
 */
export async function roundTrips(
  path: string,
  options: { key: string; method?: string; body?: unknown; bindings?: Partial<typeof env>; shard?: ShardName },
) {
  const shard = options.shard ?? DEFAULT_SHARD;
  const { d1, trips } = countingD1(shardBinding(env, shard));
  const headers: Record<string, string> = { Authorization: `Bearer ${options.key}` };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const request = new Request(`${BASE}${path}`, {
    method: options.method ?? "GET",
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, { ...env, ...options.bindings, [SHARDS[shard].binding]: d1 }, ctx);
  const beforeAnswer = [...trips];
  await waitOnExecutionContext(ctx);
  return { response, trips: beforeAnswer };
}
