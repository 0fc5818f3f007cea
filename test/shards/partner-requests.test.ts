import { eq } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { ID_SLOTS } from "../../src/db/ids";
import { actions, apiKeys, businesses, intakes, knowledgeItems, webhookEndpoints } from "../../src/db/schema";
import { SHARD_NAMES, SHARDS, type ShardName } from "../../src/db/shards";
import { revokeApiKey } from "../../src/domain/access/api-keys";
import { registerAction } from "../helpers/actions";
import { testDependencies } from "../helpers/dependencies";
import { createApiKey, createBusiness, legacyDb, shardDb } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { createIntake } from "../helpers/intakes";
import { KNOWLEDGE } from "../helpers/partner-routes";
import { subscribe } from "../helpers/webhooks";

// docs/scaling.md, Regional shards and How a request finds its shard: a business and every row keyed by it live in
// its shard; a partner's credential names that shard, so a request reaches it without any global lookup.

/** The shards whose `table` holds rows whose `column` is `value`. */
async function shardsHolding(table: SQLiteTable, column: SQLiteColumn, value: string): Promise<ShardName[]> {
  const holding: ShardName[] = [];
  for (const shard of SHARD_NAMES) {
    if ((await shardDb(shard).$count(table, eq(column, value))) > 0) holding.push(shard);
  }
  return holding;
}

describe.each(["eu1", "us1"] as const)("a business in %s", (shard) => {
  it("has an API key that names its shard after the prefix", async () => {
    const { apiKey } = await createBusiness({ shard });
    expect(apiKey).toMatch(new RegExp(`^sk_live_${shard}_[A-Za-z0-9_-]{43}$`));
    expect(await json(await call("/api/v1/me", { key: apiKey }))).toMatchObject({ handle: expect.any(String) });
  });

  it("keeps every row a partner writes in its shard, and none in another database", async () => {
    const { business, apiKey } = await createBusiness({ shard });
    await subscribe(apiKey, "https://partner.example/hooks");
    await registerAction(apiKey, "check_stock");
    await createIntake(apiKey);
    const pushed = await call("/api/v1/knowledge/hours", { key: apiKey, method: "PUT", body: KNOWLEDGE });
    await expect(pushed).toHaveStatus(201);
    expect(await shardsHolding(businesses, businesses.id, business.id)).toEqual([shard]);
    for (const table of [apiKeys, webhookEndpoints, actions, intakes, knowledgeItems]) {
      expect(await shardsHolding(table, table.businessId, business.id)).toEqual([shard]);
    }
  });

  it("refuses, on the very next request, a key revoked in its shard", async () => {
    const { business, apiKey } = await createBusiness({ shard });
    const [key] = await shardDb(shard).select().from(apiKeys).where(eq(apiKeys.businessId, business.id));
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(200);
    await revokeApiKey(testDependencies(shard), business.id, key?.id ?? 0);
    await expectError(await call("/api/v1/me", { key: apiKey }), 401, "The API key has been revoked.");
  });

  it("cannot be reached with its key renamed to another shard: that key does not exist there", async () => {
    const { apiKey } = await createBusiness({ shard });
    const other = shard === "eu1" ? "us1" : "eu1";
    const renamed = apiKey.replace(`sk_live_${shard}_`, `sk_live_${other}_`);
    await expectError(await call("/api/v1/me", { key: renamed }), 401, "The API key is not recognised.");
  });
});

describe("ids across shards", () => {
  it("numbers a business's records in its shard's own slot, so that no id a partner holds is another's", async () => {
    for (const shard of SHARD_NAMES) {
      const { apiKey } = await createBusiness({ shard });
      const endpoint = await subscribe(apiKey, "https://partner.example/hooks");
      expect(endpoint.id % ID_SLOTS).toBe(SHARDS[shard].idSlot);
      // Reads and writes by such an id go through as any other.
      const read = await call(`/api/v1/webhooks/${endpoint.id}/deliveries`, { key: apiKey });
      await expect(read).toHaveStatus(200);
    }
  });
});

describe("credentials of the shards", () => {
  it("refuses a key naming a shard that does not exist, as a key not recognised", async () => {
    const key = `sk_live_xx9_${"a".repeat(43)}`;
    await expectError(await call("/api/v1/me", { key }), 401, "The API key is not recognised.");
  });

  it("keeps a key issued before sharding (it names no shard) working on the first database", async () => {
    const { business } = await createBusiness({ shard: "legacy" });
    const { apiKey } = await createApiKey(business.id, { shard: "legacy" });
    expect(apiKey).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(200);
    expect(await legacyDb.$count(businesses, eq(businesses.id, business.id))).toBe(1);
  });
});
