import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, oauthGrants, webhookEndpoints } from "../../src/db/schema";
import { LAST_USE_PRECISION_MS } from "../../src/domain/access/last-use";
import { secretaryKnowledge } from "../../src/domain/knowledge/for-secretary";
import { asPushedItems, listKnowledgeSources, pushedItemRows } from "../../src/domain/knowledge/owner-decisions";
import { sha256Hex } from "../../src/lib/secrets";
import { deps } from "../helpers/dependencies";
import { createApiKey, db } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { intakeBody } from "../helpers/intakes";
import { connectApp, createOwnerBusiness, type OwnerBusiness } from "../helpers/oauth";

// docs/architecture.md, Principals and owner sides: every cell of the table, for two principals of one business (two
// keys; a key and an app; two apps), through the partner API.

const HOOK = `${env.RECEIVER_URL}/owner-sides`;
const ACTION = (name: string) => ({
  name,
  title: "Check stock",
  description: "Tells whether a product is in stock today, for customers asking about availability.",
  url: "https://partner.example/stock",
  parameters: { type: "object", properties: { sku: { type: "string", description: "Product code" } } },
});
const ENDPOINT_NOT_FOUND = "No webhook endpoint with that id exists for this business.";
const ACTION_NOT_FOUND = /No (connected )?action with that id/;

type Pair = { business: OwnerBusiness["business"]; first: string; second: string; sameSide: boolean };

/** The three pairs of principals a business can have, each in a business of its own. */
async function pairs(): Promise<Record<string, Pair>> {
  const twoKeys = await createOwnerBusiness();
  const keyAndApp = await createOwnerBusiness();
  const twoApps = await createOwnerBusiness();
  return {
    "two keys": {
      business: twoKeys.business,
      first: twoKeys.apiKey,
      second: (await createApiKey(twoKeys.business.id)).apiKey,
      sameSide: true,
    },
    "a key and an app": {
      business: keyAndApp.business,
      first: keyAndApp.apiKey,
      second: (await connectApp(keyAndApp)).tokens.access_token,
      sameSide: false,
    },
    "two apps": {
      business: twoApps.business,
      first: (await connectApp(twoApps)).tokens.access_token,
      second: (await connectApp(twoApps)).tokens.access_token,
      sameSide: false,
    },
  };
}

const created = async <T>(response: Response): Promise<T> => {
  await expect(response).toHaveStatus(201);
  return json<T>(response);
};
const ids = async (response: Response) => {
  await expect(response).toHaveStatus(200);
  return (await json<{ data: Array<{ id: number }> }>(response)).data.map((record) => record.id);
};

describe("owner sides: who lists, reads, changes and deletes what", async () => {
  const all = await pairs();

  it.each(Object.keys(all))("webhook endpoints, with %s", async (pair) => {
    const { first, second, sameSide } = all[pair] as Pair;
    const mine = await created<{ id: number }>(
      await call("/api/v1/webhooks", { key: first, method: "POST", body: { url: HOOK } }),
    );
    const listed = await ids(await call("/api/v1/webhooks", { key: second }));
    expect(listed.includes(mine.id)).toBe(sameSide);
    expect(await ids(await call("/api/v1/webhooks", { key: first }))).toContain(mine.id);
    const removal = await call(`/api/v1/webhooks/${mine.id}`, { key: second, method: "DELETE" });
    if (sameSide) {
      await expect(removal).toHaveStatus(204);
    } else {
      await expectError(removal, 404, ENDPOINT_NOT_FOUND);
      const stored = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, mine.id)).get();
      expect(stored?.id).toBe(mine.id);
      await expect(await call(`/api/v1/webhooks/${mine.id}`, { key: first, method: "DELETE" })).toHaveStatus(204);
    }
  });

  it.each(Object.keys(all))("connected actions, with %s", async (pair) => {
    const { first, second, sameSide } = all[pair] as Pair;
    const name = `stock_${crypto.randomUUID().slice(0, 8).replace(/-/g, "")}`;
    const mine = await created<{ id: number }>(
      await call("/api/v1/actions", { key: first, method: "POST", body: ACTION(name) }),
    );
    expect((await ids(await call("/api/v1/actions", { key: second }))).includes(mine.id)).toBe(sameSide);
    expect(await ids(await call("/api/v1/actions", { key: first }))).toContain(mine.id);
    const read = await call(`/api/v1/actions/${mine.id}`, { key: second });
    const patch = await call(`/api/v1/actions/${mine.id}`, { key: second, method: "PATCH", body: { title: "Taken" } });
    if (sameSide) {
      await expect(read).toHaveStatus(200);
      await expect(patch).toHaveStatus(200);
    } else {
      await expectError(read, 404, ACTION_NOT_FOUND);
      await expectError(patch, 404, ACTION_NOT_FOUND);
      await expectError(
        await call(`/api/v1/actions/${mine.id}`, { key: second, method: "DELETE" }),
        404,
        ACTION_NOT_FOUND,
      );
      // Unchanged by the other side.
      expect(await json(await call(`/api/v1/actions/${mine.id}`, { key: first }))).toMatchObject({
        title: "Check stock",
      });
    }
    await expect(await call(`/api/v1/actions/${mine.id}`, { key: first, method: "DELETE" })).toHaveStatus(204);
  });

  it.each(Object.keys(all))("intakes belong to the one key or app that made them, with %s", async (pair) => {
    const { first, second } = all[pair] as Pair;
    const mine = await created<{ id: number }>(
      await call("/api/v1/intakes", { key: first, method: "POST", body: intakeBody() }),
    );
    expect(await ids(await call("/api/v1/intakes", { key: second }))).not.toContain(mine.id);
    await expect(await call(`/api/v1/intakes/${mine.id}`, { key: second })).toHaveStatus(404);
    await expect(await call(`/api/v1/intakes/${mine.id}`, { key: second, method: "DELETE" })).toHaveStatus(404);
    await expect(await call(`/api/v1/intakes/${mine.id}`, { key: first, method: "DELETE" })).toHaveStatus(204);
  });

  it.each(Object.keys(all))(
    "knowledge: both list and replace it, and a replace names its author, with %s",
    async (pair) => {
      const { business, first, second } = all[pair] as Pair;
      const key = `hours-${crypto.randomUUID().slice(0, 8)}`;
      const body = (content: string) => ({ title: "Opening hours", content });
      await created(
        await call(`/api/v1/knowledge/${key}`, {
          key: first,
          method: "PUT",
          body: body("Open every day from 9 to 5."),
        }),
      );
      const listed = await json<{ data: Array<{ key: string }> }>(await call("/api/v1/knowledge", { key: second }));
      expect(listed.data.map((item) => item.key)).toContain(key);
      const replaced = await call(`/api/v1/knowledge/${key}`, {
        key: second,
        method: "PUT",
        body: body("Open every day from 10 to 6."),
      });
      await expect(replaced).toHaveStatus(200);

      const author = second.startsWith("at_") ? "oauth_app" : "api_key";
      const { pushed } = await listKnowledgeSources(deps, business);
      expect(pushed.find((item) => item.key === key)?.addedBy.kind).toBe(author);
      const { sections } = secretaryKnowledge(business, asPushedItems(await pushedItemRows(deps.db, business.id)));
      const source = sections.find((section) => "key" in section && section.key === key);
      const expected = author === "oauth_app" ? /^the app / : /^the API key /;
      expect(source && "source" in source ? source.source : "").toMatch(expected);
      await expect(await call(`/api/v1/knowledge/${key}`, { key: second, method: "DELETE" })).toHaveStatus(204);
    },
  );
});

describe("the limits count the whole business, whichever side creates", () => {
  it("20 webhook endpoints: 25 concurrent creates by a key and an app store 20", async () => {
    const shop = await createOwnerBusiness();
    const app = await connectApp(shop);
    const responses = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        call("/api/v1/webhooks", {
          key: i % 2 ? shop.apiKey : app.tokens.access_token,
          method: "POST",
          body: { url: `${HOOK}/${i}` },
        }),
      ),
    );
    expect(responses.filter((response) => response.status === 201)).toHaveLength(20);
    for (const refused of responses.filter((response) => response.status !== 201)) {
      await expectError(refused, 403, /at most 20 webhook endpoints/);
    }
    const stored = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.businessId, shop.business.id));
    expect(stored).toHaveLength(20);
    // Each side lists its own, and together they are the 20.
    const keySide = await ids(await call("/api/v1/webhooks", { key: shop.apiKey }));
    const appSide = await ids(await call("/api/v1/webhooks", { key: app.tokens.access_token }));
    expect(keySide.length + appSide.length).toBe(20);
    expect(keySide.filter((id) => appSide.includes(id))).toEqual([]);
  });

  it("10 connected actions: 13 concurrent creates by two apps store 10", async () => {
    const shop = await createOwnerBusiness();
    const apps = [await connectApp(shop), await connectApp(shop)];
    const responses = await Promise.all(
      Array.from({ length: 13 }, (_, i) =>
        call("/api/v1/actions", {
          key: apps[i % 2]?.tokens.access_token,
          method: "POST",
          body: ACTION(`stock_${i}`),
        }),
      ),
    );
    expect(responses.filter((response) => response.status === 201)).toHaveLength(10);
    for (const refused of responses.filter((response) => response.status !== 201)) {
      await expectError(refused, 403, /at most 10 connected actions/);
    }
  });
});

describe("when each credential was last used (the owner's overview)", () => {
  const lastUsedOfKey = async (apiKey: string) =>
    (
      await db
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.keyHash, sha256Hex(apiKey)))
        .get()
    )?.lastUsedAt;

  it("is recorded after a request, at most once an hour per credential", async () => {
    const shop = await createOwnerBusiness();
    expect(await lastUsedOfKey(shop.apiKey)).toBeNull();
    const before = new Date().toISOString();
    await expect(await call("/api/v1/me", { key: shop.apiKey })).toHaveStatus(200);
    const first = await lastUsedOfKey(shop.apiKey);
    expect(first && first >= before).toBe(true);
    // Within the hour: not written again.
    await expect(await call("/api/v1/orders", { key: shop.apiKey })).toHaveStatus(200);
    expect(await lastUsedOfKey(shop.apiKey)).toBe(first);
    // Over an hour later (the record moved back instead of the clock forward): written again.
    const anHourAgo = new Date(Date.now() - LAST_USE_PRECISION_MS - 1000).toISOString();
    await db
      .update(apiKeys)
      .set({ lastUsedAt: anHourAgo })
      .where(eq(apiKeys.keyHash, sha256Hex(shop.apiKey)));
    await expect(await call("/api/v1/me", { key: shop.apiKey })).toHaveStatus(200);
    expect(((await lastUsedOfKey(shop.apiKey)) ?? "") > anHourAgo).toBe(true);
  });

  it("is recorded for an app connection, whichever of its tokens is used", async () => {
    const shop = await createOwnerBusiness();
    const app = await connectApp(shop);
    const grant = () =>
      db
        .select()
        .from(oauthGrants)
        .where(and(eq(oauthGrants.id, app.grantId), eq(oauthGrants.businessId, shop.business.id)))
        .get();
    const before = (await grant())?.lastUsedAt ?? null;
    await expect(await call("/api/v1/me", { key: app.tokens.access_token })).toHaveStatus(200);
    const after = (await grant())?.lastUsedAt;
    expect(after).not.toBeNull();
    expect(after).not.toBe(before);
  });

  it("is not recorded for a refused credential", async () => {
    const shop = await createOwnerBusiness();
    const revoked = await createApiKey(shop.business.id, { revoked: true });
    await expect(await call("/api/v1/me", { key: revoked.apiKey })).toHaveStatus(401);
    expect(await lastUsedOfKey(revoked.apiKey)).toBeNull();
  });
});
