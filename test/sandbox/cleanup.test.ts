import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  apiKeys,
  bookings,
  businesses,
  businessShards,
  knowledgeItems,
  oauthClients,
  oauthGrants,
  orders,
  ownerEmails,
  ownerSessions,
  owners,
} from "../../src/db/schema";
import { SANDBOX_SHARD, type ShardName } from "../../src/db/shards";
import { signInOwner } from "../../src/domain/access/owner-sign-in";
import { createSandboxBusiness, type SandboxBusiness } from "../../src/domain/sandbox/businesses";
import { removeUnusedSandboxes, SANDBOX_UNUSED_LIFETIME_MS } from "../../src/domain/sandbox/cleanup";
import { iso } from "../../src/lib/time";
import { runScheduled } from "../helpers/cron";
import { testDependencies } from "../helpers/dependencies";
import { createBusiness, globalDb, shardDb } from "../helpers/fixtures";

const DAY_MS = 24 * 60 * 60 * 1000;
const sandboxDb = shardDb(SANDBOX_SHARD);

/**
 * Each test works at a time of its own, further in the past than the one before: a run at `base + 31 days` then
 * finds only the sandbox businesses created at `base` (and none of the other tests', or of other files'), so the
 * bounded chunk it takes is this test's.
 */
let bases = 0;
const nextBase = () => Date.now() - 1000 * DAY_MS * ++bases;

const depsAt = (at: number, shard: ShardName = SANDBOX_SHARD) => testDependencies(shard, { clock: () => at });

async function sandboxAt(at: number): Promise<SandboxBusiness> {
  return createSandboxBusiness(depsAt(at), { country: "NL" });
}

/** How many rows of the business each table holds, and its directory entries. */
async function rowsOf(sandbox: SandboxBusiness) {
  const id = sandbox.business_id;
  return {
    businesses: await sandboxDb.$count(businesses, eq(businesses.id, id)),
    owners: await sandboxDb.$count(owners, eq(owners.businessId, id)),
    apiKeys: await sandboxDb.$count(apiKeys, eq(apiKeys.businessId, id)),
    bookings: await sandboxDb.$count(bookings, eq(bookings.businessId, id)),
    orders: await sandboxDb.$count(orders, eq(orders.businessId, id)),
    knowledge: await sandboxDb.$count(knowledgeItems, eq(knowledgeItems.businessId, id)),
    directory: await globalDb.$count(businessShards, eq(businessShards.businessId, id)),
    ownerEmails: await globalDb.$count(ownerEmails, eq(ownerEmails.businessId, id)),
  };
}

const run = (at: number, limit?: number, shard?: ShardName) => removeUnusedSandboxes(depsAt(at, shard), at, limit);

describe("sandbox businesses unused for 30 days are deleted (docs/decisions.md, Sandbox businesses)", () => {
  it("deletes one unused for 31 days with every row of its and its directory entries", async () => {
    const base = nextBase();
    const sandbox = await sandboxAt(base);
    expect(Object.values(await rowsOf(sandbox)).every((count) => count > 0)).toBe(true);
    expect(await run(base + 29 * DAY_MS)).toEqual([]);
    expect(await run(base + 31 * DAY_MS)).toEqual([sandbox.business_id]);
    expect(Object.values(await rowsOf(sandbox)).every((count) => count === 0)).toBe(true);
  });

  it("keeps one whose key was used 29 days ago, deletes it once that use is over 30 days old", async () => {
    const base = nextBase();
    const sandbox = await sandboxAt(base);
    const usedAt = base + 2 * DAY_MS;
    await sandboxDb
      .update(apiKeys)
      .set({ lastUsedAt: iso(usedAt) })
      .where(eq(apiKeys.businessId, sandbox.business_id));
    expect(await run(usedAt + 29 * DAY_MS)).toEqual([]);
    expect(await run(usedAt + SANDBOX_UNUSED_LIFETIME_MS + DAY_MS)).toEqual([sandbox.business_id]);
  });

  it("counts the owner's sign-in, also once retention has removed the session", async () => {
    const base = nextBase();
    const sandbox = await sandboxAt(base);
    const signedInAt = base + 5 * DAY_MS;
    const signIn = { email: sandbox.owner_email, password: sandbox.owner_password };
    expect(await signInOwner(depsAt(signedInAt), signIn, signedInAt)).toBeDefined();
    expect(await run(signedInAt + 29 * DAY_MS)).toEqual([]);
    const [owner] = await sandboxDb.select().from(owners).where(eq(owners.businessId, sandbox.business_id));
    await sandboxDb.delete(ownerSessions).where(eq(ownerSessions.ownerId, owner?.id ?? 0));
    expect(await run(signedInAt + 29 * DAY_MS)).toEqual([]);
    expect(await run(signedInAt + 31 * DAY_MS)).toEqual([sandbox.business_id]);
  });

  it("counts an OAuth connection's use", async () => {
    const base = nextBase();
    const sandbox = await sandboxAt(base);
    const clientId = `cl_${crypto.randomUUID()}`;
    const usedAt = base + 10 * DAY_MS;
    await sandboxDb.insert(oauthClients).values({
      id: clientId,
      clientName: "Sandbox app",
      redirectUris: ["https://app.example/callback"],
      tokenEndpointAuthMethod: "client_secret_basic",
      secretHash: "0".repeat(64),
      createdAt: iso(base),
    });
    await sandboxDb.insert(oauthGrants).values({
      clientId,
      businessId: sandbox.business_id,
      scope: "api",
      createdAt: iso(base),
      lastUsedAt: iso(usedAt),
    });
    expect(await run(usedAt + 29 * DAY_MS)).toEqual([]);
    expect(await run(usedAt + 31 * DAY_MS)).toEqual([sandbox.business_id]);
    expect(await sandboxDb.$count(oauthGrants, eq(oauthGrants.businessId, sandbox.business_id))).toBe(0);
  });

  it("never deletes a live business, however long unused", async () => {
    const base = nextBase();
    const live = await createBusiness({ shard: "eu1", plan: "business" });
    const eu1 = shardDb("eu1");
    await eu1
      .update(businesses)
      .set({ createdAt: iso(base) })
      .where(eq(businesses.id, live.business.id));
    expect(await run(base + 400 * DAY_MS, 1000, "eu1")).not.toContain(live.business.id);
    expect(await eu1.$count(businesses, eq(businesses.id, live.business.id))).toBe(1);
  });

  it("deletes in bounded chunks: the next run takes the rest", async () => {
    const base = nextBase();
    const made = [await sandboxAt(base), await sandboxAt(base + 1), await sandboxAt(base + 2)];
    const first = await run(base + 31 * DAY_MS, 2);
    expect(first).toEqual(made.slice(0, 2).map((sandbox) => sandbox.business_id));
    expect(await run(base + 31 * DAY_MS, 2)).toEqual([made[2]?.business_id]);
  });

  it("runs in the cron, on each shard: also a sandbox made in a live shard before sandboxes had their own", async () => {
    const sandbox = await sandboxAt(Date.now() - 31 * DAY_MS);
    const older = await createBusiness({ sandbox: true, shard: "us1" });
    const us1 = shardDb("us1");
    await us1
      .update(businesses)
      .set({ createdAt: iso(Date.now() - 31 * DAY_MS) })
      .where(eq(businesses.id, older.business.id));
    await runScheduled();
    expect((await rowsOf(sandbox)).businesses).toBe(0);
    expect((await rowsOf(sandbox)).directory).toBe(0);
    expect(await us1.$count(businesses, eq(businesses.id, older.business.id))).toBe(0);
  });
});
