import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { shardDatabase } from "../../src/db/client";
import { oauthCodes, oauthTokens } from "../../src/db/schema";
import { disconnectApp } from "../../src/domain/access/app-connections";
import { tokenRequest } from "../../src/domain/oauth/tokens";
import { OAuthError } from "../../src/lib/oauth-errors";
import { sha256Hex } from "../../src/lib/secrets";
import { deps, testDependencies } from "../helpers/dependencies";
import { DEFAULT_SHARD, db, shardD1 } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import {
  authorizationCode,
  bodyCredentials,
  connectApp,
  createOwnerBusiness,
  expectOAuthError,
  insertClient,
  me,
  postToken,
  type RegisteredClient,
  refresh,
  registerClient,
  setRotatedAgo,
  type Tokens,
  testBudget,
} from "../helpers/oauth";

const shop = await createOwnerBusiness();

function codeForm(client: RegisteredClient, grant: { code: string; verifier: string; redirectUri: string }) {
  return {
    grant_type: "authorization_code",
    code: grant.code,
    redirect_uri: grant.redirectUri,
    code_verifier: grant.verifier,
    ...bodyCredentials(client),
  };
}

/**
 * The real D1, except that `interfere` runs once just before the second batch: a token request's first batch reads
 * its client and grant, its second writes (src/domain/oauth/tokens.ts), so this is a request landing in between.
 */
function racedBeforeWriteBatch(interfere: () => Promise<unknown>): D1Database {
  let batches = 0;
  return new Proxy(shardD1, {
    get(target, property) {
      const value = Reflect.get(target, property);
      if (property === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          if (++batches === 2) await interfere();
          return value.call(target, statements);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

async function expectRejection(promise: Promise<unknown>, error: string, description: RegExp) {
  const caught = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(caught).toBeInstanceOf(OAuthError);
  expect((caught as OAuthError).error).toBe(error);
  expect((caught as OAuthError).description).toMatch(description);
}

describe("grant_type=authorization_code (docs/oauth.md, 3. Exchange the code)", () => {
  it("answers the token pair with Cache-Control: no-store, and stores only hashes", async () => {
    const client = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    const before = Date.now();
    const response = await postToken(codeForm(client, grant));
    await expect(response).toHaveStatus(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    expect(response.headers.get("Pragma")).toBe("no-cache");
    const tokens = await json<Tokens>(response);
    expect(tokens).toEqual({
      access_token: expect.stringMatching(/^at_live_eu1_[A-Za-z0-9_-]{43}$/),
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^rt_live_eu1_[A-Za-z0-9_-]{43}$/),
      scope: "api",
    });
    const access = await db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, sha256Hex(tokens.access_token)))
      .get();
    const refreshRow = await db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, sha256Hex(tokens.refresh_token)))
      .get();
    expect(access?.kind).toBe("access");
    expect(refreshRow?.kind).toBe("refresh");
    expect(Date.parse(access?.expiresAt ?? "") - before).toBeGreaterThanOrEqual(3600_000 - 1000);
    expect(Date.parse(access?.expiresAt ?? "") - before).toBeLessThanOrEqual(3600_000 + 1000);
    expect(Date.parse(refreshRow?.expiresAt ?? "") - before).toBeGreaterThanOrEqual(90 * 86_400_000 - 1000);
    const everything = JSON.stringify(await db.select().from(oauthTokens));
    expect(everything).not.toContain(tokens.access_token);
    expect(everything).not.toContain(tokens.refresh_token);
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });

  it("refuses a wrong verifier (invalid_grant); the code stays good for the right one", async () => {
    const client = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    const wrong = await postToken(codeForm(client, { ...grant, verifier: "w".repeat(43) }));
    await expectOAuthError(wrong, 400, "invalid_grant", /code_verifier does not match/);
    await expect(await postToken(codeForm(client, grant))).toHaveStatus(200);
  });

  it.each([
    ["missing", undefined, "invalid_request", /code_verifier is required/],
    ["42 characters", "v".repeat(42), "invalid_request", /43 to 128/],
    ["129 characters", "v".repeat(129), "invalid_request", /43 to 128/],
    ["a character outside the unreserved set", `${"v".repeat(43)}+`, "invalid_request", /43 to 128/],
  ])("refuses a verifier that is %s", async (_case, verifier, error, description) => {
    const client = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    const response = await postToken({ ...codeForm(client, grant), code_verifier: verifier });
    await expectOAuthError(response, 400, error, description);
  });

  it("accepts a 128-character verifier with every unreserved character", async () => {
    const client = await registerClient();
    const verifier = `${"aZ09-._~".repeat(16)}`;
    const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
    const challenge = btoa(String.fromCharCode(...digest))
      .replace(/\+/g, "-")
      .replace(/\//g, "_")
      .replace(/=+$/, "");
    const grant = await authorizationCode(client, shop.owner, { code_challenge: challenge });
    await expect(await postToken(codeForm(client, { ...grant, verifier }))).toHaveStatus(200);
  });

  it("binds the code to the redirect_uri of the request", async () => {
    const client = await registerClient({ redirect_uris: ["https://partner.example/a", "https://partner.example/b"] });
    const grant = await authorizationCode(client, shop.owner);
    const other = await postToken({ ...codeForm(client, grant), redirect_uri: "https://partner.example/b" });
    await expectOAuthError(other, 400, "invalid_grant", /redirect_uri differs/);
    await expectOAuthError(
      await postToken({ ...codeForm(client, grant), redirect_uri: undefined }),
      400,
      "invalid_request",
      /redirect_uri is required/,
    );
    await expect(await postToken(codeForm(client, grant))).toHaveStatus(200);
  });

  it("binds the code to its client", async () => {
    const client = await registerClient();
    const thief = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    await expectOAuthError(await postToken(codeForm(thief, grant)), 400, "invalid_grant", /not valid/);
    await expect(await postToken(codeForm(client, grant))).toHaveStatus(200);
  });

  it.each([
    ["unknown", `ac_${"x".repeat(43)}`],
    ["malformed", "not-a-code"],
  ])("refuses an %s code", async (_case, code) => {
    const client = await registerClient();
    const response = await postToken({
      ...codeForm(client, { code, verifier: "v".repeat(43), redirectUri: client.redirect_uris[0] ?? "" }),
    });
    await expectOAuthError(response, 400, "invalid_grant", /not valid/);
  });

  it("refuses a code older than 10 minutes (the clock driven through the stored expiry)", async () => {
    const client = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    await db
      .update(oauthCodes)
      .set({ expiresAt: new Date(Date.now() - 1).toISOString() })
      .where(eq(oauthCodes.codeHash, sha256Hex(grant.code)));
    await expectOAuthError(await postToken(codeForm(client, grant)), 400, "invalid_grant", /expired/);
  });

  it("refuses a replayed code and revokes every token issued from it, rotated ones included", async () => {
    const client = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    const first = await json<Tokens>(await postToken(codeForm(client, grant)));
    const rotated = await json<Tokens>(await refresh(client, first.refresh_token));
    await expect(await me(rotated.access_token)).toHaveStatus(200);

    const replay = await postToken(codeForm(client, grant));
    await expectOAuthError(replay, 400, "invalid_grant", /already been used; the tokens issued from it are revoked/);
    for (const token of [first.access_token, rotated.access_token]) await expect(await me(token)).toHaveStatus(401);
    await expectOAuthError(await refresh(client, rotated.refresh_token), 400, "invalid_grant");
  });

  it("gives exactly one success to two simultaneous redemptions of one code", async () => {
    const client = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    const responses = await Promise.all([postToken(codeForm(client, grant)), postToken(codeForm(client, grant))]);
    expect(responses.map((response) => response.status).sort()).toEqual([200, 400]);
    const loser = responses.find((response) => response.status === 400);
    if (loser) await expectOAuthError(loser, 400, "invalid_grant", /already been used/);
    expect(
      await db
        .select()
        .from(oauthTokens)
        .where(eq(oauthTokens.codeHash, sha256Hex(grant.code))),
    ).toHaveLength(2);
  });

  it("refuses the redemption that read the code unused but lost the race to the write (the one-row guard)", async () => {
    const client = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    let winner: Tokens | undefined;
    const racing = shardDatabase(
      racedBeforeWriteBatch(async () => {
        winner = await json<Tokens>(await postToken(codeForm(client, grant)));
      }),
    );
    await expectRejection(
      tokenRequest(
        testDependencies(DEFAULT_SHARD, { db: racing }),
        testBudget(),
        undefined,
        new URLSearchParams(codeForm(client, grant) as Record<string, string>),
      ),
      "invalid_grant",
      /already been used/,
    );
    expect(winner?.access_token).toMatch(/^at_live_/);
    // Only the winner's pair was stored, and the replay revoked it (RFC 6749 §4.1.2).
    const family = await db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.codeHash, sha256Hex(grant.code)));
    expect(family).toHaveLength(2);
    expect(family.every((token) => token.revokedAt !== null)).toBe(true);
    await expect(await me(winner?.access_token ?? "")).toHaveStatus(401);
  });

  it("refuses a code whose app the owner disconnected meanwhile", async () => {
    const client = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    const { grantId } = await codeGrant(grant.code);
    await disconnectApp(deps, shop.business.id, grantId);
    await expectOAuthError(await postToken(codeForm(client, grant)), 400, "invalid_grant", /disconnected/);
  });
});

async function codeGrant(code: string) {
  const row = await db
    .select()
    .from(oauthCodes)
    .where(eq(oauthCodes.codeHash, sha256Hex(code)))
    .get();
  if (!row) throw new Error("no code");
  return { grantId: row.grantId };
}

describe("grant_type=refresh_token (docs/oauth.md, 5. Refresh)", () => {
  it("rotates: a new pair, the old refresh token refused afterwards", async () => {
    const { client, tokens } = await connectApp(shop);
    const response = await refresh(client, tokens.refresh_token);
    await expect(response).toHaveStatus(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const next = await json<Tokens>(response);
    expect(next).toEqual({
      access_token: expect.stringMatching(/^at_live_/),
      token_type: "Bearer",
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^rt_live_/),
      scope: "api",
    });
    expect(next.access_token).not.toBe(tokens.access_token);
    expect(next.refresh_token).not.toBe(tokens.refresh_token);
    await expect(await me(next.access_token)).toHaveStatus(200);
    const old = await db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, sha256Hex(tokens.refresh_token)))
      .get();
    expect(old?.rotatedAt).not.toBeNull();
    await expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant", /already used/);
    await expect(await me(next.access_token)).toHaveStatus(200);
  });

  it("detects reuse 6 seconds after the rotation: the token is refused and every token of the connection revoked", async () => {
    const { client, tokens } = await connectApp(shop);
    const next = await json<Tokens>(await refresh(client, tokens.refresh_token));
    await setRotatedAgo(tokens.refresh_token, 6_000);
    const reuse = await refresh(client, tokens.refresh_token);
    await expectOAuthError(reuse, 400, "invalid_grant", /already used; every token of this connection is revoked/);
    for (const token of [tokens.access_token, next.access_token]) await expect(await me(token)).toHaveStatus(401);
    await expectOAuthError(await refresh(client, next.refresh_token), 400, "invalid_grant", /revoked/);
  });

  it("refuses the refresh that read the token unused but lost the race to the write (the one-row guard)", async () => {
    const { client, tokens, grantId } = await connectApp(shop);
    let winner: Tokens | undefined;
    const racing = shardDatabase(
      racedBeforeWriteBatch(async () => {
        winner = await json<Tokens>(await refresh(client, tokens.refresh_token));
      }),
    );
    const form = new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      ...(bodyCredentials(client) as Record<string, string>),
    });
    await expectRejection(
      tokenRequest(testDependencies(DEFAULT_SHARD, { db: racing }), testBudget(), undefined, form),
      "invalid_grant",
      /used by another request at the same time/,
    );
    // One pair from the refresh token, the winner's, which keeps working: a race is no reuse to revoke for.
    expect(await db.$count(oauthTokens, eq(oauthTokens.grantId, grantId))).toBe(4);
    await expect(await me(winner?.access_token ?? "")).toHaveStatus(200);
    await expect(await refresh(client, winner?.refresh_token ?? "")).toHaveStatus(200);
  });

  it("refuses the refresh that read the token unused but lost the race to a revocation", async () => {
    const { client, tokens, grantId } = await connectApp(shop);
    const racing = shardDatabase(
      racedBeforeWriteBatch(() =>
        postToken({ token: tokens.refresh_token, client_id: client.client_id }, { path: "/api/oauth/revoke" }),
      ),
    );
    const form = new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      ...(bodyCredentials(client) as Record<string, string>),
    });
    await expectRejection(
      tokenRequest(testDependencies(DEFAULT_SHARD, { db: racing }), testBudget(), undefined, form),
      "invalid_grant",
      /or revoked/,
    );
    const family = await db.select().from(oauthTokens).where(eq(oauthTokens.grantId, grantId));
    expect(family).toHaveLength(2);
    expect(family.every((token) => token.revokedAt !== null)).toBe(true);
  });

  it("refuses a refresh token unused for 90 days", async () => {
    const { client, tokens } = await connectApp(shop);
    await db
      .update(oauthTokens)
      .set({ expiresAt: new Date(Date.now() - 1).toISOString() })
      .where(eq(oauthTokens.tokenHash, sha256Hex(tokens.refresh_token)));
    await expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant", /90 days/);
  });

  it("starts a new 90 days with every rotation", async () => {
    const { client, tokens } = await connectApp(shop);
    const next = await json<Tokens>(await refresh(client, tokens.refresh_token));
    const row = await db
      .select()
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, sha256Hex(next.refresh_token)))
      .get();
    expect(Date.parse(row?.expiresAt ?? "") - Date.now()).toBeGreaterThan(90 * 86_400_000 - 60_000);
  });

  it("refuses a refresh after the owner disconnected the app", async () => {
    const { client, tokens, grantId } = await connectApp(shop);
    await disconnectApp(deps, shop.business.id, grantId);
    await expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant", /disconnected/);
  });

  it("refuses another client's refresh token, an access token, and an unknown one", async () => {
    const { tokens } = await connectApp(shop);
    const other = await registerClient();
    await expectOAuthError(await refresh(other, tokens.refresh_token), 400, "invalid_grant", /not valid/);
    const { client } = await connectApp(shop);
    await expectOAuthError(await refresh(client, tokens.access_token), 400, "invalid_grant", /not valid/);
    await expectOAuthError(await refresh(client, `rt_live_${"y".repeat(43)}`), 400, "invalid_grant", /not valid/);
  });

  it("accepts scope=api and refuses any other scope", async () => {
    const { client, tokens } = await connectApp(shop);
    const wider = await postToken({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      scope: "admin",
      ...bodyCredentials(client),
    });
    await expectOAuthError(wider, 400, "invalid_scope");
    const same = await postToken({
      grant_type: "refresh_token",
      refresh_token: tokens.refresh_token,
      scope: "api",
      ...bodyCredentials(client),
    });
    await expect(same).toHaveStatus(200);
  });
});

describe("client authentication by the registered method (RFC 6749 §2.3; RFC 7591 token_endpoint_auth_method)", () => {
  const exchange = async (
    client: RegisteredClient,
    credentials: Record<string, string | undefined>,
    basic?: [string, string],
  ) => {
    const grant = await authorizationCode(client, shop.owner);
    const form = { ...codeForm(client, grant), client_id: undefined, client_secret: undefined, ...credentials };
    return postToken(form, { basic });
  };

  it("client_secret_basic: the id and secret in Basic", async () => {
    const client = await registerClient({ token_endpoint_auth_method: "client_secret_basic" });
    await expect(await exchange(client, {}, [client.client_id, client.client_secret ?? ""])).toHaveStatus(200);
  });

  it("client_secret_basic: a wrong secret is invalid_client, 401 with WWW-Authenticate: Basic", async () => {
    const client = await registerClient({ token_endpoint_auth_method: "client_secret_basic" });
    const response = await exchange(client, {}, [client.client_id, `${client.client_secret}x`]);
    await expectOAuthError(response, 401, "invalid_client", /secret is not correct/);
    expect(response.headers.get("WWW-Authenticate")).toMatch(/^Basic realm="oauth"/);
  });

  it("client_secret_basic: a secret sent in the body instead is invalid_client", async () => {
    const client = await registerClient({ token_endpoint_auth_method: "client_secret_basic" });
    const response = await exchange(client, { client_id: client.client_id, client_secret: client.client_secret });
    await expectOAuthError(response, 401, "invalid_client", /Authorization: Basic/);
  });

  it("client_secret_basic: form-urlencodes id and secret inside Basic (RFC 6749 §2.3.1), a secret with + % and :", async () => {
    const secret = "s3cr+t%20with:colons:and+plus%";
    await insertClient({ id: "cl_handmade_basic", secret, method: "client_secret_basic" });
    const client: RegisteredClient = {
      client_id: "cl_handmade_basic",
      client_name: "Hand-made client",
      redirect_uris: ["https://partner.example/oauth/callback"],
      token_endpoint_auth_method: "client_secret_basic",
    };
    // Encoded as RFC 6749 asks: + → %2B, % → %25, : → %3A.
    await expect(await exchange(client, {}, [client.client_id, secret])).toHaveStatus(200);
    // Sent raw, the + reads as a space and %20 as a space: not the secret.
    const raw = await exchange(client, {}, undefined).then(() =>
      authorizationCode(client, shop.owner).then((grant) =>
        postToken(
          { ...codeForm(client, grant), client_id: undefined, client_secret: undefined },
          { authorization: `Basic ${btoa(`${client.client_id}:${secret}`)}` },
        ),
      ),
    );
    await expectOAuthError(raw, 401, "invalid_client");
  });

  it("client_secret_post: the id and secret in the body; a wrong or missing secret, or Basic, is invalid_client", async () => {
    const client = await registerClient({ token_endpoint_auth_method: "client_secret_post" });
    await expect(
      await exchange(client, { client_id: client.client_id, client_secret: client.client_secret }),
    ).toHaveStatus(200);
    await expectOAuthError(
      await exchange(client, { client_id: client.client_id, client_secret: "cs_live_wrong" }),
      401,
      "invalid_client",
      /secret is not correct/,
    );
    await expectOAuthError(await exchange(client, { client_id: client.client_id }), 401, "invalid_client", /form body/);
    await expectOAuthError(
      await exchange(client, {}, [client.client_id, client.client_secret ?? ""]),
      401,
      "invalid_client",
    );
  });

  it("none: a public client sends its client_id only; a secret is refused", async () => {
    const client = await registerClient({ token_endpoint_auth_method: "none" });
    await expect(await exchange(client, { client_id: client.client_id })).toHaveStatus(200);
    await expectOAuthError(
      await exchange(client, { client_id: client.client_id, client_secret: "anything" }),
      401,
      "invalid_client",
      /public/,
    );
    await expectOAuthError(await exchange(client, {}, [client.client_id, "anything"]), 401, "invalid_client", /public/);
  });

  it.each([
    ["no client_id at all", {}, undefined, 401, "invalid_client"],
    ["an unknown client_id", { client_id: "cl_nobodynobodynobody00" }, undefined, 401, "invalid_client"],
  ] as const)("refuses %s", async (_case, credentials, basic, status, error) => {
    const client = await registerClient();
    await expectOAuthError(await exchange(client, credentials, basic), status, error);
  });

  it("refuses two methods at once, and a body client_id that differs from Basic's (invalid_request)", async () => {
    const client = await registerClient({ token_endpoint_auth_method: "client_secret_basic" });
    const secret = client.client_secret ?? "";
    await expectOAuthError(
      await exchange(client, { client_secret: secret }, [client.client_id, secret]),
      400,
      "invalid_request",
      /not both/,
    );
    await expectOAuthError(
      await exchange(client, { client_id: "cl_other" }, [client.client_id, secret]),
      400,
      "invalid_request",
      /differs/,
    );
  });

  it.each([
    ["not base64", "Basic %%%"],
    ["without a colon", `Basic ${btoa("just-an-id")}`],
    ["a bad percent-encoding", `Basic ${btoa("cl_x:%zz")}`],
  ])("refuses a Basic header %s (invalid_client, 401)", async (_case, authorization) => {
    const response = await postToken({ grant_type: "refresh_token", refresh_token: "x" }, { authorization });
    await expectOAuthError(response, 401, "invalid_client");
    expect(response.headers.get("WWW-Authenticate")).toMatch(/^Basic/);
  });
});

describe("the token request itself (RFC 6749 §3.2, §5.2)", () => {
  it("refuses a missing grant_type (invalid_request) and an unsupported one (unsupported_grant_type)", async () => {
    const client = await registerClient();
    await expectOAuthError(await postToken({ ...bodyCredentials(client) }), 400, "invalid_request", /grant_type/);
    for (const grantType of ["password", "implicit", "urn:ietf:params:oauth:grant-type:device_code"]) {
      await expectOAuthError(
        await postToken({ grant_type: grantType, ...bodyCredentials(client) }),
        400,
        "unsupported_grant_type",
      );
    }
  });

  it("refuses a JSON body and a repeated parameter (invalid_request)", async () => {
    const client = await registerClient();
    const asJson = await call("/api/oauth/token", { method: "POST", body: { grant_type: "refresh_token" } });
    await expectOAuthError(asJson, 400, "invalid_request", /x-www-form-urlencoded/);
    const twice = await call("/api/oauth/token", {
      method: "POST",
      body: `grant_type=refresh_token&refresh_token=a&refresh_token=b&client_id=${client.client_id}&client_secret=${client.client_secret}`,
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    await expectOAuthError(twice, 400, "invalid_request", /refresh_token is repeated/);
  });

  it("answers GET with 405", async () => {
    await expect(await call("/api/oauth/token")).toHaveStatus(405);
  });

  it("never echoes a secret or a hash in an error", async () => {
    const client = await registerClient();
    const response = await postToken({
      grant_type: "authorization_code",
      code: "ac_x",
      redirect_uri: "https://partner.example/oauth/callback",
      code_verifier: "v".repeat(43),
      client_id: client.client_id,
      client_secret: `${client.client_secret}nope`,
    });
    const text = await response.text();
    expect(text).not.toContain(client.client_secret ?? "");
    expect(text).not.toMatch(/[0-9a-f]{64}/);
  });
});
