import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  actions,
  businesses,
  intakes,
  knowledgeItems,
  oauthGrants,
  oauthTokens,
  webhookEndpoints,
} from "../../src/db/schema";
import { authenticatePartner, principalKey, principalRef } from "../../src/domain/access/principals";
import { sha256Hex } from "../../src/lib/secrets";
import { deps } from "../helpers/dependencies";
import { db, shardD1 } from "../helpers/fixtures";
import { BASE, call, expectError, json } from "../helpers/http";
import { createIntake, intakeBody } from "../helpers/intakes";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";

const shopA = await createOwnerBusiness({ name: "Shop A" });
const shopB = await createOwnerBusiness({ name: "Shop B" });
const appA = await connectApp(shopA);
const appB = await connectApp(shopB);
const tokenA = appA.tokens.access_token;

async function expectUnauthorized(response: Response, sentence: RegExp) {
  await expect(response).toHaveStatus(401);
  expect(response.headers.get("WWW-Authenticate")).toBe(
    `Bearer realm="api", resource_metadata="${BASE}/.well-known/oauth-protected-resource/api/v1", error="invalid_token"`,
  );
  await expectError(response, 401, sentence, { code: "invalid_credential", param: undefined });
}

describe("access tokens work like API keys on /api/v1 (docs/oauth.md, 4. Call the API)", () => {
  it.each([
    "/api/v1/me",
    "/api/v1/appointments",
    "/api/v1/orders",
    "/api/v1/webhooks",
    "/api/v1/actions",
    "/api/v1/knowledge",
    "/api/v1/intakes",
  ])("%s answers 200 with a token", async (path) => {
    const response = await call(path, { key: tokenA });
    await expect(response).toHaveStatus(200);
    expect(response.headers.get("RateLimit-Policy")).toBe('"requests";q=600;w=60');
    expect(response.headers.get("RateLimit")).toBeNull();
  });

  it("GET /me identifies the connected business", async () => {
    expect(await json(await call("/api/v1/me", { key: tokenA }))).toEqual({
      id: shopA.business.id,
      handle: shopA.business.handle,
      name: "Shop A",
      currency: "EUR",
      country: "NL",
    });
    expect((await json(await call("/api/v1/me", { key: appB.tokens.access_token }))).id).toBe(shopB.business.id);
  });

  it("the principal is the app connection of that business", async () => {
    const principal = await authenticatePartner(deps, `Bearer ${tokenA}`);
    expect(principal).toMatchObject({ kind: "oauth_app", grantId: appA.grantId, clientId: appA.client.client_id });
    expect(principal.business.id).toBe(shopA.business.id);
    expect(principalRef(principal)).toEqual({ apiKeyId: null, oauthGrantId: appA.grantId });
    // The request budget is per connection, never shared with an API key of the same number.
    expect(principalKey(principal)).toBe(`oauth_app:${appA.grantId}`);
  });

  it("refuses an unknown, an expired and a revoked token with 401", async () => {
    await expectUnauthorized(await call("/api/v1/me", { key: `at_live_${"z".repeat(43)}` }), /not recognised/);
    const expiring = await connectApp(shopA);
    await db
      .update(oauthTokens)
      .set({ expiresAt: new Date(Date.now() - 1).toISOString() })
      .where(eq(oauthTokens.tokenHash, sha256Hex(expiring.tokens.access_token)));
    await expectUnauthorized(await call("/api/v1/me", { key: expiring.tokens.access_token }), /expired/);
    const revoked = await connectApp(shopA);
    await db
      .update(oauthTokens)
      .set({ revokedAt: new Date().toISOString() })
      .where(eq(oauthTokens.tokenHash, sha256Hex(revoked.tokens.access_token)));
    await expectUnauthorized(await call("/api/v1/me", { key: revoked.tokens.access_token }), /revoked/);
  });

  it("does not take a refresh token as a bearer credential", async () => {
    const response = await call("/api/v1/me", { key: appA.tokens.refresh_token });
    await expect(response).toHaveStatus(401);
    expect((await json(response)).error).toBe("The API key is not recognised.");
  });

  it("answers 403 when the plan lapses, and 200 again once it is active", async () => {
    const shop = await createOwnerBusiness();
    const { tokens } = await connectApp(shop);
    const setPlan = (plan: "pro" | "free", planActive: boolean) =>
      db.update(businesses).set({ plan, planActive }).where(eq(businesses.id, shop.business.id));
    await setPlan("pro", false);
    const lapsed = await call("/api/v1/me", { key: tokens.access_token });
    await expect(lapsed).toHaveStatus(403);
    expect((await json(lapsed)).error).toMatch(/lapsed/);
    await setPlan("free", true);
    await expect(await call("/api/v1/orders", { key: tokens.access_token })).toHaveStatus(403);
    await setPlan("pro", true);
    await expect(await call("/api/v1/me", { key: tokens.access_token })).toHaveStatus(200);
  });
});

describe("a token is for one business (docs/oauth.md, 4. Call the API)", () => {
  it("never reads business B with business A's token", async () => {
    const intakeOfB = await createIntake(appB.tokens.access_token);
    await expect(await call(`/api/v1/intakes/${intakeOfB.id}`, { key: tokenA })).toHaveStatus(404);
    await expect(await call(`/api/v1/intakes/${intakeOfB.id}/responses`, { key: tokenA })).toHaveStatus(404);
    const hook = await json(
      await call("/api/v1/webhooks", {
        key: appB.tokens.access_token,
        method: "POST",
        body: { url: "https://partner.example/hooks/b" },
      }),
    );
    await expect(await call(`/api/v1/webhooks/${hook.id}`, { key: tokenA, method: "DELETE" })).toHaveStatus(404);
    const listed = await json<{ data: { id: number }[] }>(await call("/api/v1/webhooks", { key: tokenA }));
    expect(listed.data.map((endpoint) => endpoint.id)).not.toContain(hook.id);
  });

  it("keeps intakes apart between the app and an API key of the same business (each sees only its own)", async () => {
    const byApp = await createIntake(tokenA);
    const byKey = await createIntake(shopA.apiKey);
    await expect(await call(`/api/v1/intakes/${byApp.id}`, { key: shopA.apiKey })).toHaveStatus(404);
    await expect(await call(`/api/v1/intakes/${byKey.id}`, { key: tokenA })).toHaveStatus(404);
    await expect(await call(`/api/v1/intakes/${byApp.id}`, { key: tokenA })).toHaveStatus(200);
  });
});

describe("what an app creates records the app connection (docs/architecture.md, Principals and owner sides)", () => {
  it("intakes, webhook endpoints, actions and knowledge carry oauth_grant_id; actions say source oauth_app", async () => {
    const intake = await json(await call("/api/v1/intakes", { key: tokenA, method: "POST", body: intakeBody() }));
    const hook = await json(
      await call("/api/v1/webhooks", { key: tokenA, method: "POST", body: { url: "https://partner.example/hooks/a" } }),
    );
    const actionResponse = await call("/api/v1/actions", {
      key: tokenA,
      method: "POST",
      body: {
        name: "check_stock",
        title: "Check stock",
        description: "Tells whether a product is in stock today.",
        url: "https://partner.example/stock",
      },
    });
    await expect(actionResponse).toHaveStatus(201);
    const action = await json(actionResponse);
    expect(action.source).toBe("oauth_app");
    const pushed = await call("/api/v1/knowledge/opening-hours", {
      key: tokenA,
      method: "PUT",
      body: { title: "Holiday hours", content: "Closed from 24 to 26 December." },
    });
    await expect(pushed).toHaveStatus(201);

    const ref = { apiKeyId: null, oauthGrantId: appA.grantId };
    expect(
      await db
        .select({ apiKeyId: intakes.apiKeyId, oauthGrantId: intakes.oauthGrantId })
        .from(intakes)
        .where(eq(intakes.id, Number(intake.id)))
        .get(),
    ).toEqual(ref);
    expect(
      await db
        .select({ apiKeyId: webhookEndpoints.apiKeyId, oauthGrantId: webhookEndpoints.oauthGrantId })
        .from(webhookEndpoints)
        .where(eq(webhookEndpoints.id, Number(hook.id)))
        .get(),
    ).toEqual(ref);
    expect(
      await db
        .select({ apiKeyId: actions.apiKeyId, oauthGrantId: actions.oauthGrantId })
        .from(actions)
        .where(eq(actions.id, Number(action.id)))
        .get(),
    ).toEqual(ref);
    expect(
      await db
        .select({ apiKeyId: knowledgeItems.apiKeyId, oauthGrantId: knowledgeItems.oauthGrantId })
        .from(knowledgeItems)
        .where(and(eq(knowledgeItems.businessId, shopA.business.id), eq(knowledgeItems.key, "opening-hours")))
        .get(),
    ).toEqual(ref);
  });
});

describe("the token path costs what the key path costs", () => {
  it("finds the token with one indexed lookup: three rows read (token, connection, business)", async () => {
    const query = db
      .select({ kind: oauthTokens.kind, grantId: oauthGrants.id, business: businesses })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .innerJoin(businesses, eq(businesses.id, oauthGrants.businessId))
      .where(eq(oauthTokens.tokenHash, sha256Hex(tokenA)));
    const { sql, params } = query.toSQL();
    const result = await shardD1
      .prepare(sql)
      .bind(...params)
      .all();
    expect(result.results).toHaveLength(1);
    expect(result.meta.rows_read).toBe(3);
  });
});
