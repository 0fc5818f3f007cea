import { eq, sql } from "drizzle-orm";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { apiKeys, credentialForwards, oauthClients, webhookDeliveries } from "../../src/db/schema";
import { UNENQUEUED_AFTER_MS } from "../../src/domain/webhooks/outbox/sweep";
import { sha256Hex } from "../../src/lib/secrets";
import { registerAction } from "../helpers/actions";
import { moved, populatedLegacyBusiness, rowsIn } from "../helpers/business-move";
import { runScheduled } from "../helpers/cron";
import { page, signedIn } from "../helpers/dashboard";
import { globalDb, legacyDb, shardDb } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { browse, me, refresh, type Tokens } from "../helpers/oauth";
import { deliveryRowIn } from "../helpers/webhooks";

// A legacy business with a row in every table is moved to eu1 by the operators' move (docs/scaling.md, Moving a
// business between shards): every row arrives with its id, none stays behind but the credentials' forwards, the
// partners' credentials work through them, the pending delivery is sent from eu1 and the owner signs in again. The
// cron's sweep reads the whole database, so this file runs in a runtime of its own (vitest.config.ts).

describe("moving a legacy business to eu1", async () => {
  const shop = await populatedLegacyBusiness();
  const { business, apiKey, app } = shop;
  const jarBefore = await signedIn(shop.owner);
  const before = await rowsIn("legacy", business.id);
  let outcome: Awaited<ReturnType<typeof moved>>;

  beforeAll(async () => {
    outcome = await moved(business.id, "eu1");
  });

  it("answers where the business went, and how many rows of each table were copied and verified", () => {
    const rows = Object.values(before).reduce((sum, table) => sum + table.length, 0);
    const tables = Object.fromEntries(Object.entries(before).map(([table, found]) => [table, found.length]));
    expect(outcome).toEqual({
      business_id: business.id,
      from: "legacy",
      to: "eu1",
      status: "moved",
      rows_copied: rows,
      tables,
    });
  });

  it("copies every row to eu1 with its id, and leaves none in legacy but the forwards", async () => {
    for (const [table, rows] of Object.entries(before)) expect(rows.length, table).toBeGreaterThan(0);
    const after = await rowsIn("eu1", business.id);
    // The copies are the rows as they were; the pending delivery is unenqueued there, and was never enqueued here.
    expect(after).toEqual(before);
    const left = await rowsIn("legacy", business.id);
    for (const [table, rows] of Object.entries(left)) expect(rows, table).toEqual([]);
    // The client's row in legacy is its global registration, not a copy: it stays.
    const [client] = await globalDb.select().from(oauthClients).where(eq(oauthClients.id, app.client.client_id));
    expect(client).toEqual(before.oauth_clients?.[0]);
    const forwards = await legacyDb
      .select()
      .from(credentialForwards)
      .where(eq(credentialForwards.credentialHash, sha256Hex(apiKey)));
    expect(forwards).toMatchObject([{ shard: "eu1" }]);
  });

  it("keeps the old API key working through its forward, for reads and writes", async () => {
    const read = await call("/api/v1/me", { key: apiKey });
    await expect(read).toHaveStatus(200);
    expect(await json(read)).toMatchObject({ id: business.id });
    const action = await registerAction(apiKey, "stock_after_move");
    const rows = await shardDb("eu1").select().from(apiKeys).where(eq(apiKeys.businessId, business.id));
    expect(rows.length).toBe(2);
    expect(await call(`/api/v1/actions/${action.id}`, { key: apiKey })).toHaveProperty("status", 200);
  });

  it("keeps the old access token working, and refreshes with the old refresh token", async () => {
    await expect(await me(app.tokens.access_token)).toHaveStatus(200);
    const written = await call("/api/v1/actions", {
      key: app.tokens.access_token,
      method: "POST",
      body: {
        name: "app_after_move",
        title: "App",
        description: "Written by the app after the move.",
        url: "https://partner.example/a",
      },
    });
    await expect(written).toHaveStatus(201);
    const refreshed = await refresh(app.client, app.tokens.refresh_token);
    await expect(refreshed).toHaveStatus(200);
    const tokens = await json<Tokens>(refreshed);
    expect(tokens.access_token).toMatch(/^at_live_eu1_/);
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });

  it("refuses a key revoked after the move at once, where its row now is", async () => {
    await expect(await call("/api/v1/me", { key: shop.secondKey })).toHaveStatus(200);
    await shardDb("eu1")
      .update(apiKeys)
      .set({ revokedAt: new Date().toISOString() })
      .where(eq(apiKeys.keyHash, sha256Hex(shop.secondKey)));
    await expectError(await call("/api/v1/me", { key: shop.secondKey }), 401, "The API key has been revoked.", {
      code: "invalid_credential",
      param: undefined,
    });
  });

  it("sends the pending delivery from eu1, once its sweep finds it", async () => {
    await shardDb("eu1")
      .update(webhookDeliveries)
      .set({ createdAt: new Date(Date.now() - 2 * UNENQUEUED_AFTER_MS).toISOString() })
      .where(eq(webhookDeliveries.id, shop.deliveryId));
    await runScheduled();
    const requests = await shop.box.arrived(1);
    expect(requests.map((request) => request.headers["x-service-delivery"])).toEqual([String(shop.deliveryId)]);
    await vi.waitFor(
      async () => expect(await deliveryRowIn("eu1", shop.deliveryId)).toMatchObject({ status: "delivered" }),
      { timeout: 10_000, interval: 50 },
    );
    const [left] = await legacyDb
      .select({ n: sql<number>`count(*)` })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, shop.deliveryId));
    expect(left?.n).toBe(0);
  });

  it("revokes the connection with the old access token at the revocation endpoint, through its forward", async () => {
    const revoked = await call("/api/oauth/revoke", {
      method: "POST",
      body: { token: app.tokens.access_token, client_id: app.client.client_id },
    });
    await expect(revoked).toHaveStatus(200);
    await expect(await me(app.tokens.access_token)).toHaveStatus(401);
  });

  it("signs the owner out, and in again to the dashboard of eu1", async () => {
    await expect(await browse(jarBefore, "/dashboard")).toHaveStatus(303);
    const jar = await signedIn(shop.owner);
    const dashboard = await page(jar, "/dashboard");
    await expect(dashboard).toHaveStatus(200);
    expect(dashboard.html).toContain("Shop that moves");
  });
});
