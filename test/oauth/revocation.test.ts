import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { actions, intakes, knowledgeItems, oauthGrants, oauthTokens } from "../../src/db/schema";
import { connectionNotFound, disconnectApp, listConnections } from "../../src/domain/access/app-connections";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { ApiError } from "../../src/lib/api-error";
import { idOrNotFound } from "../../src/lib/validation";
import { deps } from "../helpers/dependencies";
import { db } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { createIntake } from "../helpers/intakes";
import {
  authorizationCode,
  authorizeQuery,
  bodyCredentials,
  connectApp,
  createOwnerBusiness,
  decide,
  expectOAuthError,
  postToken,
  type RegisteredClient,
  refresh,
  registerClient,
  type Tokens,
  validAuthorizationParams,
} from "../helpers/oauth";

const shop = await createOwnerBusiness();

const me = (token: string) => call("/api/v1/me", { key: token });

const revoke = (client: RegisteredClient, token: string, extra: Record<string, string> = {}) =>
  postToken({ token, ...bodyCredentials(client), ...extra }, { path: "/api/oauth/revoke" });

async function expectRevokedAnswer(response: Response) {
  await expect(response).toHaveStatus(200);
  expect(await response.text()).toBe("");
  expect(response.headers.get("Cache-Control")).toBe("no-store");
}

describe("revocation (RFC 7009; docs/oauth.md, 6. Revoke: both tokens stop at once)", () => {
  it.each(["access_token", "refresh_token"] as const)("posting the %s stops both tokens at once", async (which) => {
    const { client, tokens } = await connectApp(shop);
    await expectRevokedAnswer(await revoke(client, tokens[which]));
    await expect(await me(tokens.access_token)).toHaveStatus(401);
    await expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant", /revoked/);
  });

  it("stops every token of the connection, also those of an earlier authorization", async () => {
    const { client, tokens } = await connectApp(shop);
    const again = await authorizationCode(client, shop.owner);
    const second = await json<Tokens>(
      await postToken({
        grant_type: "authorization_code",
        code: again.code,
        redirect_uri: again.redirectUri,
        code_verifier: again.verifier,
        ...bodyCredentials(client),
      }),
    );
    await expectRevokedAnswer(await revoke(client, second.access_token));
    for (const token of [tokens.access_token, second.access_token]) await expect(await me(token)).toHaveStatus(401);
  });

  it("keeps the connection and its intakes: only the owner's disconnection switches those off", async () => {
    const { client, tokens, grantId } = await connectApp(shop);
    const intake = await createIntake(tokens.access_token);
    await switchIntakeOn(deps, shop.business.id, intake.id);
    await expectRevokedAnswer(await revoke(client, tokens.refresh_token, { token_type_hint: "refresh_token" }));
    expect((await db.select().from(intakes).where(eq(intakes.id, intake.id)).get())?.enabled).toBe(true);
    expect((await db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId)).get())?.revokedAt).toBeNull();
  });

  it("authenticates the client by its method: Basic, and none with client_id only", async () => {
    const client = await registerClient({ token_endpoint_auth_method: "client_secret_basic" });
    const grant = await authorizationCode(client, shop.owner);
    const tokens = await json<Tokens>(
      await postToken(
        {
          grant_type: "authorization_code",
          code: grant.code,
          redirect_uri: grant.redirectUri,
          code_verifier: grant.verifier,
        },
        { basic: [client.client_id, client.client_secret ?? ""] },
      ),
    );
    const wrong = await postToken(
      { token: tokens.access_token },
      { path: "/api/oauth/revoke", basic: [client.client_id, "wrong"] },
    );
    await expectOAuthError(wrong, 401, "invalid_client");
    expect(wrong.headers.get("WWW-Authenticate")).toMatch(/^Basic/);
    await expect(await me(tokens.access_token)).toHaveStatus(200);
    await expectRevokedAnswer(
      await postToken(
        { token: tokens.access_token },
        { path: "/api/oauth/revoke", basic: [client.client_id, client.client_secret ?? ""] },
      ),
    );
    await expect(await me(tokens.access_token)).toHaveStatus(401);

    const { client: publicClient, tokens: publicTokens } = await connectApp(shop, {
      token_endpoint_auth_method: "none",
    });
    await expectRevokedAnswer(await revoke(publicClient, publicTokens.access_token));
    await expect(await me(publicTokens.access_token)).toHaveStatus(401);
  });

  it("answers 200 for unknown, malformed and already revoked tokens", async () => {
    const { client, tokens } = await connectApp(shop);
    await expectRevokedAnswer(await revoke(client, `at_live_${"q".repeat(43)}`));
    await expectRevokedAnswer(await revoke(client, "not-a-token"));
    await expectRevokedAnswer(await revoke(client, tokens.access_token));
    await expectRevokedAnswer(await revoke(client, tokens.access_token));
  });

  it("leaves another client's token alone, with the same 200", async () => {
    const { tokens } = await connectApp(shop);
    const other = await registerClient();
    await expectRevokedAnswer(await revoke(other, tokens.access_token));
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });

  it("refuses a request without token (invalid_request) or with a wrong secret (invalid_client)", async () => {
    const { client, tokens } = await connectApp(shop);
    await expectOAuthError(
      await postToken({ ...bodyCredentials(client) }, { path: "/api/oauth/revoke" }),
      400,
      "invalid_request",
      /token is required/,
    );
    await expectOAuthError(
      await revoke(client, tokens.access_token, { client_secret: "cs_live_nope" }),
      401,
      "invalid_client",
    );
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });
});

/** A revocation request with a JSON body, which /revoke takes beside the form encoding (docs/oauth.md, 6. Revoke). */
const revokeAsJson = (body: unknown, headers: Record<string, string> = {}) =>
  call("/api/oauth/revoke", { method: "POST", body, headers });

describe("revocation with token and client_id (docs/oauth.md, 6. Revoke)", () => {
  /** A connection of a client_secret_basic client, whose code is redeemed with Basic as its method requires. */
  async function connectBasicApp() {
    const client = await registerClient({ token_endpoint_auth_method: "client_secret_basic" });
    const grant = await authorizationCode(client, shop.owner);
    const redeemed = await postToken(
      {
        grant_type: "authorization_code",
        code: grant.code,
        redirect_uri: grant.redirectUri,
        code_verifier: grant.verifier,
      },
      { basic: [client.client_id, client.client_secret ?? ""] },
    );
    await expect(redeemed).toHaveStatus(200);
    return { client, tokens: await json<Tokens>(redeemed) };
  }

  /** Every token of the client's connection is revoked (the refresh token too, which `me` cannot show). */
  async function expectConnectionRevoked(client: RegisteredClient, tokens: Tokens) {
    await expect(await me(tokens.access_token)).toHaveStatus(401);
    const rows = await db
      .select({ revokedAt: oauthTokens.revokedAt })
      .from(oauthTokens)
      .innerJoin(oauthGrants, eq(oauthGrants.id, oauthTokens.grantId))
      .where(eq(oauthGrants.clientId, client.client_id));
    expect(rows.length).toBeGreaterThanOrEqual(2);
    expect(rows.every((row) => row.revokedAt !== null)).toBe(true);
  }

  const connectors = { client_secret_post: () => connectApp(shop), client_secret_basic: connectBasicApp };

  it.each(["client_secret_post", "client_secret_basic"] as const)(
    "accepts token with client_id only from a %s client, as JSON and as a form",
    async (method) => {
      const asJson = await connectors[method]();
      await expectRevokedAnswer(
        await revokeAsJson({ token: asJson.tokens.access_token, client_id: asJson.client.client_id }),
      );
      await expectConnectionRevoked(asJson.client, asJson.tokens);

      const asForm = await connectors[method]();
      await expectRevokedAnswer(
        await postToken(
          { token: asForm.tokens.refresh_token, client_id: asForm.client.client_id },
          { path: "/api/oauth/revoke" },
        ),
      );
      await expectConnectionRevoked(asForm.client, asForm.tokens);
    },
  );

  it("takes JSON with the secret, a token_type_hint, a charset, and null or unknown members", async () => {
    const { client, tokens } = await connectApp(shop);
    await expectRevokedAnswer(
      await revokeAsJson(
        {
          token: tokens.refresh_token,
          token_type_hint: "refresh_token",
          client_id: client.client_id,
          client_secret: client.client_secret,
          scope: ["ignored"],
        },
        { "Content-Type": "application/json; charset=utf-8" },
      ),
    );
    await expect(await me(tokens.access_token)).toHaveStatus(401);

    const publicApp = await connectApp(shop, { token_endpoint_auth_method: "none" });
    await expectRevokedAnswer(
      await revokeAsJson({
        token: publicApp.tokens.access_token,
        client_id: publicApp.client.client_id,
        client_secret: null,
      }),
    );
    await expect(await me(publicApp.tokens.access_token)).toHaveStatus(401);
  });

  it("refuses a wrong secret sent as JSON, in the form or in Basic (invalid_client), and revokes nothing", async () => {
    const { client, tokens } = await connectApp(shop);
    const wrong = `${client.client_secret}x`;
    const refusals = [
      await revokeAsJson({ token: tokens.access_token, client_id: client.client_id, client_secret: wrong }),
      await postToken(
        { token: tokens.access_token, client_id: client.client_id, client_secret: wrong },
        { path: "/api/oauth/revoke" },
      ),
      await revokeAsJson(
        { token: tokens.access_token },
        { Authorization: `Basic ${btoa(`${client.client_id}:${wrong}`)}` },
      ),
    ];
    for (const refused of refusals) {
      await expectOAuthError(refused, 401, "invalid_client", /not correct/);
      expect(refused.headers.get("WWW-Authenticate")).toMatch(/^Basic/);
    }
    const publicApp = await connectApp(shop, { token_endpoint_auth_method: "none" });
    await expectOAuthError(
      await revokeAsJson({
        token: publicApp.tokens.access_token,
        client_id: publicApp.client.client_id,
        client_secret: "cs_live_guess",
      }),
      401,
      "invalid_client",
      /public/,
    );
    for (const token of [tokens.access_token, publicApp.tokens.access_token])
      await expect(await me(token)).toHaveStatus(200);
  });

  it("answers 200 with an empty body for an unknown or another client's token sent as JSON", async () => {
    const { tokens } = await connectApp(shop);
    const other = await registerClient();
    await expectRevokedAnswer(await revokeAsJson({ token: `rt_live_${"q".repeat(43)}`, client_id: other.client_id }));
    await expectRevokedAnswer(await revokeAsJson({ token: tokens.access_token, client_id: other.client_id }));
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });

  it.each([
    ["without token", { client_id: "cl_x" }, /token is required/],
    ["with a token that is not a string", { token: 12, client_id: "cl_x" }, /token must be a string/],
    ["with a client_id that is not a string", { token: "t", client_id: ["cl_x"] }, /client_id must be a string/],
    ["that is an array", [], /JSON object/],
    ["that is not JSON", "{token", /not valid JSON/],
  ])("refuses a JSON body %s (invalid_request)", async (_case, body, description) => {
    await expectOAuthError(await revokeAsJson(body), 400, "invalid_request", description);
  });

  it("refuses a JSON body without client_id (invalid_client) and an unknown client_id (invalid_client)", async () => {
    const { tokens } = await connectApp(shop);
    await expectOAuthError(await revokeAsJson({ token: tokens.access_token }), 401, "invalid_client", /client_id/);
    await expectOAuthError(
      await revokeAsJson({ token: tokens.access_token, client_id: "cl_unknown" }),
      401,
      "invalid_client",
      /No client/,
    );
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });

  it("refuses any other content type, naming the two it takes (invalid_request)", async () => {
    const { client, tokens } = await connectApp(shop);
    const response = await call("/api/oauth/revoke", {
      method: "POST",
      body: JSON.stringify({ token: tokens.access_token, client_id: client.client_id }),
      headers: { "Content-Type": "text/plain" },
    });
    await expectOAuthError(response, 400, "invalid_request", /application\/x-www-form-urlencoded or application\/json/);
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });
});

describe("disconnecting an app (docs/oauth.md, When the owner disconnects; a domain function until the dashboard shows it)", () => {
  it("kills its tokens at once and switches its intakes off; its actions and knowledge remain", async () => {
    const { client, tokens, grantId } = await connectApp(shop);
    const intake = await createIntake(tokens.access_token);
    await switchIntakeOn(deps, shop.business.id, intake.id);
    const action = await json(
      await call("/api/v1/actions", {
        key: tokens.access_token,
        method: "POST",
        body: {
          name: "stock_lookup",
          title: "Stock",
          description: "Tells whether a product is in stock today.",
          url: "https://partner.example/stock",
        },
      }),
    );
    await call("/api/v1/knowledge/returns", {
      key: tokens.access_token,
      method: "PUT",
      body: { title: "Returns", content: "Returns are accepted within 30 days." },
    });
    // An intake of an API key of the same business is not the app's.
    const keyIntake = await createIntake(shop.apiKey);
    await switchIntakeOn(deps, shop.business.id, keyIntake.id);

    const result = await disconnectApp(deps, shop.business.id, grantId);
    expect(result).toEqual({
      id: grantId,
      disconnectedAt: expect.any(String),
      intakesSwitchedOff: 1,
      actionsSwitchedOff: 0,
      endpointsDeleted: 0,
    });

    const refused = await me(tokens.access_token);
    await expect(refused).toHaveStatus(401);
    expect((await json(refused)).error).toMatch(/disconnected/);
    await expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant", /disconnected/);
    const rows = await db.select().from(oauthTokens).where(eq(oauthTokens.grantId, grantId));
    expect(rows.every((row) => row.revokedAt !== null)).toBe(true);
    expect((await db.select().from(intakes).where(eq(intakes.id, intake.id)).get())?.enabled).toBe(false);
    expect((await db.select().from(intakes).where(eq(intakes.id, keyIntake.id)).get())?.enabled).toBe(true);
    expect(
      await db
        .select()
        .from(actions)
        .where(eq(actions.id, Number(action.id)))
        .get(),
    ).toBeDefined();
    expect(
      await db
        .select()
        .from(knowledgeItems)
        .where(and(eq(knowledgeItems.businessId, shop.business.id), eq(knowledgeItems.key, "returns")))
        .get(),
    ).toBeDefined();
    // The owner cannot switch an intake of a disconnected app back on.
    const caught = await switchIntakeOn(deps, shop.business.id, intake.id).catch((error: unknown) => error);
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).status).toBe(403);
  });

  it("keeps the first disconnection time, and answers 404 for another business's connection or a bad id", async () => {
    const { grantId } = await connectApp(shop);
    const first = await disconnectApp(deps, shop.business.id, grantId);
    const second = await disconnectApp(deps, shop.business.id, grantId);
    expect(second).toEqual({ ...first, intakesSwitchedOff: 0 });

    const other = await createOwnerBusiness();
    const theirs = await connectApp(other);
    for (const id of [String(theirs.grantId), "abc", "987654321"]) {
      const caught = await (async () =>
        disconnectApp(deps, shop.business.id, idOrNotFound(id, connectionNotFound)))().catch((error: unknown) => error);
      expect((caught as ApiError).status).toBe(404);
    }
    await expect(await me(theirs.tokens.access_token)).toHaveStatus(200);
  });

  it("spends codes issued before it: after a new approval only the new code works, and the app finds its intakes", async () => {
    const { client, tokens, grantId } = await connectApp(shop);
    const intake = await createIntake(tokens.access_token);
    const pending = await authorizationCode(client, shop.owner);
    await disconnectApp(deps, shop.business.id, grantId);

    const fresh = await authorizationCode(client, shop.owner);
    const redeem = (grant: typeof fresh) =>
      postToken({
        grant_type: "authorization_code",
        code: grant.code,
        redirect_uri: grant.redirectUri,
        code_verifier: grant.verifier,
        ...bodyCredentials(client),
      });
    await expectOAuthError(await redeem(pending), 400, "invalid_grant");
    const reconnected = await redeem(fresh);
    await expect(reconnected).toHaveStatus(200);
    const newTokens = await json<Tokens>(reconnected);
    // One connection per client and business: the same one, reactivated; its intake is back, still off.
    expect(
      (await db.select().from(oauthGrants).where(eq(oauthGrants.clientId, client.client_id))).map((g) => g.id),
    ).toEqual([grantId]);
    const own = await json<{ data: { id: number; enabled: boolean }[] }>(
      await call("/api/v1/intakes", { key: newTokens.access_token }),
    );
    expect(own.data).toEqual([expect.objectContaining({ id: intake.id, enabled: false })]);
    // The old tokens stay dead.
    await expect(await me(tokens.access_token)).toHaveStatus(401);
  });

  it("a refused re-authorization does not reconnect", async () => {
    const { client, grantId } = await connectApp(shop);
    await disconnectApp(deps, shop.business.id, grantId);
    const { params } = await validAuthorizationParams(client);
    await decide(authorizeQuery(params), shop.owner, "refuse");
    expect((await db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId)).get())?.revokedAt).not.toBeNull();
  });
});

describe("the owner's list of connected apps", () => {
  it("lists the business's connections, newest first, with the app's name and when it was disconnected", async () => {
    const owner = await createOwnerBusiness();
    const first = await connectApp(owner, { client_name: "First App" });
    const second = await connectApp(owner, { client_name: "Second App" });
    await connectApp(shop, { client_name: "Another business's app" });
    const { disconnectedAt } = await disconnectApp(deps, owner.business.id, first.grantId);
    expect(await listConnections(deps, owner.business.id)).toEqual([
      {
        id: second.grantId,
        clientId: second.client.client_id,
        appName: "Second App",
        connectedAt: expect.any(String),
        disconnectedAt: null,
      },
      {
        id: first.grantId,
        clientId: first.client.client_id,
        appName: "First App",
        connectedAt: expect.any(String),
        disconnectedAt,
      },
    ]);
  });

  it("dates a reconnection from the new approval", async () => {
    const owner = await createOwnerBusiness();
    const { client, grantId } = await connectApp(owner);
    await db.update(oauthGrants).set({ createdAt: "2020-01-01T00:00:00.000Z" }).where(eq(oauthGrants.id, grantId));
    await authorizationCode(client, owner.owner);
    expect((await listConnections(deps, owner.business.id))[0]?.connectedAt).toBe("2020-01-01T00:00:00.000Z");
    await disconnectApp(deps, owner.business.id, grantId);
    await authorizationCode(client, owner.owner);
    const [connection] = await listConnections(deps, owner.business.id);
    expect(connection?.connectedAt.startsWith("2020")).toBe(false);
    expect(connection?.disconnectedAt).toBeNull();
  });
});
