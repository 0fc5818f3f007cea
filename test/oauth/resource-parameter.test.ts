import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oauthCodes, oauthTokens } from "../../src/db/schema";
import { type ShardName, shardSegment } from "../../src/db/shards";
import { ACCESS_TOKEN_PREFIX } from "../../src/domain/oauth/token-format";
import { randomToken, sha256Hex } from "../../src/lib/secrets";
import { expectErrorPage, requestAuthorization } from "../helpers/authorize";
import { shardDb } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import {
  authorizationCode,
  authorizeQuery,
  bodyCredentials,
  connectApp,
  createOwnerBusiness,
  expectOAuthError,
  ISSUER,
  me,
  postToken,
  REDIRECT_URI,
  type RegisteredClient,
  refresh,
  registerClient,
  type Tokens,
  validAuthorizationParams,
} from "../helpers/oauth";

// RFC 8707 resource indicators (docs/oauth.md, Finding the authorization server): a client may name this API as
// `resource` at the authorization and token endpoints; anything else is `invalid_target`. The code and the tokens
// are bound to the resource named, and /api/v1 accepts a token bound to it or to none.

const RESOURCE = `${ISSUER}/api/v1`;
const OTHER = "https://other.example/";

const owner = await createOwnerBusiness({ name: "Bella Hair Studio" });
const client = await registerClient({ client_name: "Booking Tool" });

const stored = {
  code: (shard: ShardName, code: string) =>
    shardDb(shard)
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, sha256Hex(code)))
      .get(),
  token: (shard: ShardName, token: string) =>
    shardDb(shard)
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, sha256Hex(token)))
      .get(),
};

/** The code exchange of `code`, with `resource` when given. */
const exchange = (app: RegisteredClient, code: Awaited<ReturnType<typeof authorizationCode>>, resource?: string) =>
  postToken({
    grant_type: "authorization_code",
    code: code.code,
    redirect_uri: code.redirectUri,
    code_verifier: code.verifier,
    resource,
    ...bodyCredentials(app),
  });

/** The resource both tokens of an answer are bound to, as stored in `shard`. */
async function boundTo(shard: ShardName, tokens: Tokens) {
  const [access, refreshToken] = [
    await stored.token(shard, tokens.access_token),
    await stored.token(shard, tokens.refresh_token),
  ];
  expect(access?.resource).toBe(refreshToken?.resource);
  return access?.resource;
}

describe("resource at the authorization endpoint (RFC 8707 §2)", () => {
  it.each([
    ["this API", RESOURCE],
    ["this API with a trailing slash", `${RESOURCE}/`],
  ])("accepts %s, and binds the code to the API's identifier", async (_case, resource) => {
    const code = await authorizationCode(client, owner.owner, { resource });
    expect((await stored.code(owner.shard, code.code))?.resource).toBe(RESOURCE);
  });

  it("without resource, the code is bound to none, as before", async () => {
    const code = await authorizationCode(client, owner.owner);
    expect((await stored.code(owner.shard, code.code))?.resource).toBeNull();
  });

  it.each([
    ["another URL", OTHER, /only resource is this API/],
    ["another path of this service", `${ISSUER}/api/v2`, /only resource is this API/],
    ["a relative reference", "/api/v1", /only resource is this API/],
    ["a fragment", `${RESOURCE}#me`, /only resource is this API/],
  ])("refuses %s with invalid_target, sent back only through the owner's click", async (_case, resource, sentence) => {
    const { response, params } = await requestAuthorization(client, { resource });
    await expectInvalidTarget(response, params.state, sentence);
  });

  it("refuses resource named twice, even twice the API", async () => {
    const { params } = await validAuthorizationParams(client, { resource: RESOURCE });
    const query = `${authorizeQuery(params)}&resource=${encodeURIComponent(RESOURCE)}`;
    await expectInvalidTarget(await call(`/oauth/authorize?${query}`), params.state, /only resource is this API/);
  });

  it("an otherwise invalid request is shown without the way back, whatever its resource", async () => {
    const { response } = await requestAuthorization(client, { resource: OTHER, state: undefined });
    await expectErrorPage(response.clone(), /state is required/);
    expect(await response.text()).not.toContain("invalid_target");
  });
});

/**
 * The error page of an authorization request for another resource: no redirect (RFC 9700 §4.11.2), and a link to the
 * redirect URI with `error=invalid_target`, the request's `state` and `iss`.
 */
async function expectInvalidTarget(response: Response, state: string | undefined, sentence: RegExp) {
  const html = await response.clone().text();
  await expectErrorPage(response, sentence);
  const href = /<a href="([^"]+)">Go back to partner\.example<\/a>/.exec(html)?.[1]?.replaceAll("&amp;", "&");
  const back = new URL(href ?? "");
  expect(`${back.origin}${back.pathname}`).toBe(REDIRECT_URI);
  expect(back.searchParams.get("error")).toBe("invalid_target");
  expect(back.searchParams.get("error_description")).toMatch(sentence);
  expect(back.searchParams.get("state")).toBe(state);
  expect(back.searchParams.get("iss")).toBe(ISSUER);
}

describe("resource at the token endpoint: the code exchange (RFC 8707 §2.2)", () => {
  it.each([
    ["the same resource", RESOURCE],
    ["the same with a trailing slash", `${RESOURCE}/`],
    ["no resource", undefined],
  ])("a code for the API, exchanged with %s: tokens bound to the API", async (_case, resource) => {
    const code = await authorizationCode(client, owner.owner, { resource: RESOURCE });
    const response = await exchange(client, code, resource);
    await expect(response).toHaveStatus(200);
    const tokens = await json<Tokens>(response);
    expect(await boundTo(owner.shard, tokens)).toBe(RESOURCE);
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });

  it("a code without one, exchanged with the API: the tokens are narrowed to it", async () => {
    const code = await authorizationCode(client, owner.owner);
    const tokens = await json<Tokens>(await exchange(client, code, RESOURCE));
    expect(await boundTo(owner.shard, tokens)).toBe(RESOURCE);
  });

  it("a code without one, exchanged without one: unbound tokens, as before", async () => {
    const code = await authorizationCode(client, owner.owner);
    const tokens = await json<Tokens>(await exchange(client, code));
    expect(await boundTo(owner.shard, tokens)).toBeNull();
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });

  it("another resource, or two, is invalid_target (400), and the code is not spent", async () => {
    const code = await authorizationCode(client, owner.owner, { resource: RESOURCE });
    await expectOAuthError(await exchange(client, code, OTHER), 400, "invalid_target", /only resource is this API/);
    await expectOAuthError(await exchange(client, code, "api/v1"), 400, "invalid_target", /only resource is this API/);
    const form = authorizeQuery({
      grant_type: "authorization_code",
      code: code.code,
      redirect_uri: code.redirectUri,
      code_verifier: code.verifier,
      resource: RESOURCE,
      ...bodyCredentials(client),
    });
    const twice = await call("/api/oauth/token", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: `${form}&resource=${encodeURIComponent(RESOURCE)}`,
    });
    await expectOAuthError(twice, 400, "invalid_target", /only resource is this API/);
    await expect(await exchange(client, code, RESOURCE)).toHaveStatus(200);
  });

  it("a resource that differs from the code's is invalid_target", async () => {
    const code = await authorizationCode(client, owner.owner, { resource: RESOURCE });
    // A code for another resource, which this service never issues: written as such.
    await shardDb(owner.shard)
      .update(oauthCodes)
      .set({ resource: OTHER })
      .where(eq(oauthCodes.codeHash, sha256Hex(code.code)));
    await expectOAuthError(await exchange(client, code, RESOURCE), 400, "invalid_target", /differs/);
  });
});

describe("resource at the token endpoint: the refresh (RFC 8707 §2.2)", () => {
  it("keeps a bound token's resource, with or without naming it again", async () => {
    const code = await authorizationCode(client, owner.owner, { resource: RESOURCE });
    let tokens = await json<Tokens>(await exchange(client, code));
    for (const resource of [undefined, RESOURCE]) {
      const response = await postToken({
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        resource,
        ...bodyCredentials(client),
      });
      await expect(response).toHaveStatus(200);
      tokens = await json<Tokens>(response);
      expect(await boundTo(owner.shard, tokens)).toBe(RESOURCE);
    }
  });

  it("narrows an unbound token to the API", async () => {
    const app = await connectApp(owner);
    expect(await boundTo(owner.shard, app.tokens)).toBeNull();
    const response = await postToken({
      grant_type: "refresh_token",
      refresh_token: app.tokens.refresh_token,
      resource: RESOURCE,
      ...bodyCredentials(app.client),
    });
    expect(await boundTo(owner.shard, await json<Tokens>(response))).toBe(RESOURCE);
  });

  it("refuses another resource with invalid_target, without rotating the token", async () => {
    const app = await connectApp(owner);
    const refreshWith = (resource: string) =>
      postToken({
        grant_type: "refresh_token",
        refresh_token: app.tokens.refresh_token,
        resource,
        ...bodyCredentials(app.client),
      });
    await expectOAuthError(await refreshWith(OTHER), 400, "invalid_target", /only resource is this API/);
    expect((await stored.token(owner.shard, app.tokens.refresh_token))?.rotatedAt).toBeNull();
    await expect(await refresh(app.client, app.tokens.refresh_token)).toHaveStatus(200);
  });
});

describe("/api/v1 accepts a token bound to it or to none, and refuses one for another resource", () => {
  it.each(["eu1", "us1"] as const)("a business in %s: the whole flow with resource", async (shard) => {
    const regional = await createOwnerBusiness({ name: `Shop in ${shard}`, shard });
    const app = await registerClient();
    const code = await authorizationCode(app, regional.owner, { resource: RESOURCE });
    expect((await stored.code(shard, code.code))?.resource).toBe(RESOURCE);
    const tokens = await json<Tokens>(await exchange(app, code, RESOURCE));
    expect(await boundTo(shard, tokens)).toBe(RESOURCE);
    const answer = await me(tokens.access_token);
    await expect(answer).toHaveStatus(200);
    expect((await json(answer)).id).toBe(regional.business.id);
    const refreshed = await json<Tokens>(await refresh(app, tokens.refresh_token));
    expect(await boundTo(shard, refreshed)).toBe(RESOURCE);
  });

  it.each(["eu1", "us1"] as const)(
    "a token of a business in %s bound to another resource: 401 invalid_token",
    async (shard) => {
      const regional = await createOwnerBusiness({ shard });
      const { grantId } = await connectApp(regional);
      // This service never mints one: the row is written as another issuer's binding would look.
      const token = randomToken(ACCESS_TOKEN_PREFIX + shardSegment(shard));
      const now = Date.now();
      await shardDb(shard)
        .insert(oauthTokens)
        .values({
          tokenHash: sha256Hex(token),
          kind: "access",
          grantId,
          resource: OTHER,
          expiresAt: new Date(now + 3_600_000).toISOString(),
          createdAt: new Date(now).toISOString(),
        });
      const response = await me(token);
      const metadata = `${ISSUER}/.well-known/oauth-protected-resource/api/v1`;
      expect(response.headers.get("WWW-Authenticate")).toBe(
        `Bearer realm="api", resource_metadata="${metadata}", error="invalid_token"`,
      );
      await expectError(response, 401, /another resource/, { code: "invalid_credential" });
    },
  );
});
