import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { oauthClients, oauthGrants, webhookEndpoints } from "../../src/db/schema";
import { SHARD_NAMES, type ShardName } from "../../src/db/shards";
import { sha256Hex } from "../../src/lib/secrets";
import { globalDb, shardDb } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import {
  authorizationCode,
  authorizeQuery,
  browse,
  CookieJar,
  createOwnerBusiness,
  expectOAuthError,
  ISSUER,
  me,
  type OwnerBusiness,
  postToken,
  type RegisteredClient,
  registerClient,
  type Tokens,
  validAuthorizationParams,
} from "../helpers/oauth";
import { expectServerErrors } from "../helpers/server-errors";
import { failingBatches } from "../helpers/shards";

// docs/oauth.md, Managing your app (RFC 7592): registration answers a registration access token and the client's
// configuration URI, with which the app reads, replaces and deletes its registration and rotates its secret. A shard
// holds a copy of every client connected there, which the token endpoint authenticates against: each change must
// reach the copies in eu1 and us1, which these tests read as stored rows beside what the endpoints answer. The clock
// is driven by faking `Date` (the routes read `Date.now()`), never by sleeping.

const eu = await createOwnerBusiness({ shard: "eu1" });
const us = await createOwnerBusiness({ shard: "us1" });
const SHOPS = [eu, us];

type Managed = RegisteredClient & { registration_access_token: string; registration_client_uri: string };
type Rotated = Managed & { client_secret: string; previous_client_secret_expires_at: number };

const DAY_SECONDS = 86_400;
const LEGACY_ACCESS_TOKEN = `at_live_${"x".repeat(43)}`;

afterEach(() => {
  vi.useRealTimers();
});

/** Freezes `Date` at `at` (now, unless said): every request then runs at the instant set, until `vi.setSystemTime`. */
function freezeClock(at = Date.now()) {
  vi.useFakeTimers({ toFake: ["Date"], now: at });
  return at;
}

const register = async (overrides: Record<string, unknown> = {}) => (await registerClient(overrides)) as Managed;

/** A request to the client's configuration endpoint (or below it), with its registration access token unless said. */
const manage = (
  method: string,
  client: Managed,
  options: { token?: string | null; body?: unknown; rest?: string; headers?: Record<string, string> } = {},
) =>
  call(`/api/oauth/register/${client.client_id}${options.rest ?? ""}`, {
    method,
    key: options.token === null ? undefined : (options.token ?? client.registration_access_token),
    body: options.body,
    headers: options.headers,
  });

const rotate = async (client: Managed, body?: unknown) => {
  const response = await manage("POST", client, { rest: "/rotate-secret", body });
  await expect(response).toHaveStatus(200);
  return json<Rotated>(response);
};

/** A token or revocation request with `secret`, the way the client registered: Basic, or in the form. */
const withSecret = (client: Managed, secret: string, form: Record<string, string>, path?: string) =>
  client.token_endpoint_auth_method === "client_secret_basic"
    ? postToken(form, { basic: [client.client_id, secret], path })
    : postToken({ ...form, client_id: client.client_id, client_secret: secret }, { path });

const refreshWith = (client: Managed, secret: string, refreshToken: string) =>
  withSecret(client, secret, { grant_type: "refresh_token", refresh_token: refreshToken });

/** Revokes a made-up token: the answer says only whether the secret authenticated (200) or not (401). */
const revokeWith = (client: Managed, secret: string) =>
  withSecret(client, secret, { token: LEGACY_ACCESS_TOKEN }, "/api/oauth/revoke");

/** The owner approves the client and the code is exchanged with `secret`: a new token pair of the connection. */
async function connect(client: Managed, shop: OwnerBusiness, secret = client.client_secret ?? "") {
  const grant = await authorizationCode(client, shop.owner);
  const response = await withSecret(client, secret, {
    grant_type: "authorization_code",
    code: grant.code,
    redirect_uri: grant.redirectUri,
    code_verifier: grant.verifier,
  });
  await expect(response).toHaveStatus(200);
  return json<Tokens>(response);
}

async function refreshed(client: Managed, secret: string, refreshToken: string) {
  const response = await refreshWith(client, secret, refreshToken);
  await expect(response).toHaveStatus(200);
  return json<Tokens>(response);
}

const rowIn = (shard: ShardName, id: string) =>
  shardDb(shard).select().from(oauthClients).where(eq(oauthClients.id, id)).get();
const globalRow = (id: string) => globalDb.select().from(oauthClients).where(eq(oauthClients.id, id)).get();

/** The copies in eu1 and us1 are exactly the global row. */
async function expectCopiesAsGlobal(id: string) {
  const global = await globalRow(id);
  expect(await rowIn("eu1", id)).toEqual(global);
  expect(await rowIn("us1", id)).toEqual(global);
  return global;
}

async function expectInvalidToken(response: Response) {
  await expectOAuthError(response, 401, "invalid_token");
  expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="oauth", error="invalid_token"');
}

describe("registration answers the management credentials (RFC 7592 §3)", () => {
  it.each(["client_secret_basic", "none"] as const)(
    "gives a %s client registration_access_token and registration_client_uri, storing only the token's SHA-256",
    async (method) => {
      const client = await register({ token_endpoint_auth_method: method });
      expect(client.registration_access_token).toMatch(/^rat_live_[A-Za-z0-9_-]{43}$/);
      expect(client.registration_client_uri).toBe(`${ISSUER}/api/oauth/register/${client.client_id}`);
      const stored = await globalRow(client.client_id);
      expect(stored?.registrationTokenHash).toBe(sha256Hex(client.registration_access_token));
      expect(JSON.stringify(stored)).not.toContain(client.registration_access_token);
    },
  );

  it("reads the registration with the token: the metadata as registered, never the secret", async () => {
    const client = await register({ token_endpoint_auth_method: "client_secret_basic" });
    const response = await manage("GET", client);
    await expect(response).toHaveStatus(200);
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const {
      client_secret: _secret,
      client_secret_expires_at: _expires,
      ...metadata
    } = client as Managed & Record<string, unknown>;
    expect(await json(response)).toEqual(metadata);
  });
});

describe("the registration access token", () => {
  const OPERATIONS = [
    ["GET", ""],
    ["PUT", ""],
    ["DELETE", ""],
    ["POST", "/rotate-secret"],
  ] as const;

  it.each(OPERATIONS)(
    "%s %s: 401 invalid_token with a Bearer challenge without it, wrong, another client's, as Basic, or for an unknown client; nothing changes",
    async (method, rest) => {
      const client = await register();
      const other = await register();
      const before = await globalRow(client.client_id);
      const metadata = {
        client_id: client.client_id,
        client_name: "Taken Over",
        redirect_uris: ["https://evil.example/cb"],
      };
      const body = method === "PUT" || method === "POST" ? metadata : undefined;
      const request = (options: Parameters<typeof manage>[2]) => manage(method, client, { rest, body, ...options });
      await expectInvalidToken(await request({ token: null }));
      await expectInvalidToken(await request({ token: `rat_live_${"x".repeat(43)}` }));
      await expectInvalidToken(await request({ token: other.registration_access_token }));
      await expectInvalidToken(
        await request({ token: null, headers: { Authorization: `Basic ${btoa(`${client.client_id}:x`)}` } }),
      );
      // An unknown client with a token: the same answer, so it tells nobody which clients exist.
      await expectInvalidToken(
        await manage(method, { ...client, client_id: "cl_unknownunknownunknown" }, { rest, body }),
      );
      expect(await globalRow(client.client_id)).toEqual(before);
      await expect(await manage("GET", client)).toHaveStatus(200);
    },
  );
});

describe("updating the registration (RFC 7592 §2.2)", () => {
  const NEW_URI = "https://partner.example/oauth/new-callback";

  it("replaces name and redirect URIs: the copies follow, the next authorization uses the new URI and refuses the removed one", async () => {
    const client = await register();
    await connect(client, eu);
    const replaced = { client_id: client.client_id, client_name: "Renamed Tool", redirect_uris: [NEW_URI, NEW_URI] };
    const response = await manage("PUT", client, { body: replaced });
    await expect(response).toHaveStatus(200);
    const body = await json<Managed>(response);
    expect(body).toMatchObject({ client_name: "Renamed Tool", redirect_uris: [NEW_URI] });
    expect(body).not.toHaveProperty("client_secret");
    expect(await json(await manage("GET", client))).toEqual(body);
    expect((await rowIn("eu1", client.client_id))?.clientName).toBe("Renamed Tool");
    expect(await rowIn("eu1", client.client_id)).toEqual(await globalRow(client.client_id));

    const { params } = await validAuthorizationParams(client);
    const refused = await browse(new CookieJar(), `/oauth/authorize?${authorizeQuery(params)}`);
    await expect(refused).toHaveStatus(400);
    expect(await refused.text()).toMatch(/not one that this app registered/);
    const grant = await authorizationCode({ ...client, redirect_uris: [NEW_URI] }, us.owner);
    expect(grant.redirectUri).toBe(NEW_URI);
  });

  it("switches between the two secret methods, with the current secret in the body or none; the token endpoint follows", async () => {
    const client = await register({ token_endpoint_auth_method: "client_secret_post" });
    const tokens = await connect(client, us);
    const put = (method: string, extra: Record<string, unknown> = {}) =>
      manage("PUT", client, {
        body: { ...client, token_endpoint_auth_method: method, registration_access_token: "ignored", ...extra },
      });
    await expect(await put("client_secret_basic", { client_secret: client.client_secret })).toHaveStatus(200);
    const basic = { ...client, token_endpoint_auth_method: "client_secret_basic" as const };
    await expectOAuthError(
      await refreshWith(client, client.client_secret ?? "", tokens.refresh_token),
      401,
      "invalid_client",
    );
    const next = await refreshed(basic, client.client_secret ?? "", tokens.refresh_token);
    await expect(await put("client_secret_post", { client_secret: undefined })).toHaveStatus(200);
    await refreshed(client, client.client_secret ?? "", next.refresh_token);
  });

  it.each([
    ["a redirect URI that is not https", { redirect_uris: ["http://partner.example/cb"] }, "invalid_redirect_uri"],
    ["a redirect URI with a fragment", { redirect_uris: ["https://partner.example/cb#x"] }, "invalid_redirect_uri"],
    ["no client_id", { client_id: undefined }, "invalid_client_metadata"],
    ["another client_id", { client_id: "cl_someoneelsesomeoneelse" }, "invalid_client_metadata"],
    ["a client_secret that is not the current one", { client_secret: "cs_live_chosen" }, "invalid_client_metadata"],
    ["a change to none (public)", { token_endpoint_auth_method: "none" }, "invalid_client_metadata"],
    ["an empty client_name", { client_name: "" }, "invalid_client_metadata"],
  ])("refuses %s: 400 %s, and nothing changes", async (_case, change, error) => {
    const client = await register();
    const before = await globalRow(client.client_id);
    await expectOAuthError(await manage("PUT", client, { body: { ...client, ...change } }), 400, error);
    expect(await globalRow(client.client_id)).toEqual(before);
  });

  it("refuses a public client turning confidential, and a body that is not JSON", async () => {
    const client = await register({ token_endpoint_auth_method: "none" });
    const before = await globalRow(client.client_id);
    const body = { ...client, token_endpoint_auth_method: "client_secret_basic" };
    await expectOAuthError(await manage("PUT", client, { body }), 400, "invalid_client_metadata", /cannot change/);
    await expectOAuthError(await manage("PUT", client, { body: "{client_id" }), 400, "invalid_client_metadata");
    expect(await globalRow(client.client_id)).toEqual(before);
  });
});

describe.each(["client_secret_post", "client_secret_basic"] as const)("rotating a %s client's secret", (method) => {
  it("authenticates both secrets during the overlap and only the new one after it, for businesses in eu1 and us1; no owner reconnects", async () => {
    const client = await register({ token_endpoint_auth_method: method });
    const old = client.client_secret ?? "";
    // Two pairs per business from before the rotation: one refreshed during the overlap, one kept for after it.
    const pairs = [];
    for (const shop of SHOPS)
      pairs.push({ shop, during: await connect(client, shop), after: await connect(client, shop) });

    const rotatedAt = freezeClock();
    const rotated = await rotate(client, { expires_in: 600 });
    expect(rotated.client_secret).toMatch(/^cs_live_[A-Za-z0-9_-]{43}$/);
    expect(rotated).toMatchObject({
      client_id: client.client_id,
      client_secret_expires_at: 0,
      previous_client_secret_expires_at: Math.floor(rotatedAt / 1000) + 600,
      registration_access_token: client.registration_access_token,
    });
    const stored = await expectCopiesAsGlobal(client.client_id);
    expect(stored).toMatchObject({ secretHash: sha256Hex(rotated.client_secret), previousSecretHash: sha256Hex(old) });

    vi.setSystemTime(rotatedAt + 599_999);
    for (const pair of pairs) {
      const byOld = await refreshed(client, old, pair.during.refresh_token);
      pair.during = await refreshed(client, rotated.client_secret, byOld.refresh_token);
    }
    await expect(await revokeWith(client, old)).toHaveStatus(200);
    await expect(await revokeWith(client, rotated.client_secret)).toHaveStatus(200);

    vi.setSystemTime(rotatedAt + 600_000);
    await expectOAuthError(await revokeWith(client, old), 401, "invalid_client");
    await expect(await revokeWith(client, rotated.client_secret)).toHaveStatus(200);
    for (const { shop, during, after } of pairs) {
      await expectOAuthError(await refreshWith(client, old, during.refresh_token), 401, "invalid_client");
      await expect(await me(after.access_token), shop.shard).toHaveStatus(200);
      const next = await refreshed(client, rotated.client_secret, after.refresh_token);
      await expect(await me(next.access_token), shop.shard).toHaveStatus(200);
      await refreshed(client, rotated.client_secret, during.refresh_token);
    }
  });
});

describe("the rotation's expires_in and refusals", () => {
  it.each([
    ["no body: a day", undefined, DAY_SECONDS],
    ["{}: a day", {}, DAY_SECONDS],
    ["0: the old secret stops at once", { expires_in: 0 }, 0],
    ["604800, a week, the most", { expires_in: 7 * DAY_SECONDS }, 7 * DAY_SECONDS],
  ])("takes %s", async (_case, body, seconds) => {
    const client = await register();
    const rotatedAt = freezeClock();
    const rotated = await rotate(client, body);
    expect(rotated.previous_client_secret_expires_at).toBe(Math.floor(rotatedAt / 1000) + seconds);
    await expect(await revokeWith(client, client.client_secret ?? "")).toHaveStatus(seconds > 0 ? 200 : 401);
    vi.setSystemTime(rotatedAt + seconds * 1000);
    await expect(await revokeWith(client, client.client_secret ?? "")).toHaveStatus(401);
    await expect(await revokeWith(client, rotated.client_secret)).toHaveStatus(200);
  });

  it.each([
    ["a negative number", { expires_in: -1 }],
    ["more than a week", { expires_in: 7 * DAY_SECONDS + 1 }],
    ["a fraction", { expires_in: 1.5 }],
    ["a string", { expires_in: "60" }],
    ["null", { expires_in: null }],
    ["an array body", []],
    ["a body that is not JSON", "{expires_in"],
  ])("refuses %s with 400 invalid_request, and nothing changes", async (_case, body) => {
    const client = await register();
    const before = await globalRow(client.client_id);
    await expectOAuthError(await manage("POST", client, { rest: "/rotate-secret", body }), 400, "invalid_request");
    expect(await globalRow(client.client_id)).toEqual(before);
  });

  it("refuses a public client's rotation: it has no secret", async () => {
    const client = await register({ token_endpoint_auth_method: "none" });
    const response = await manage("POST", client, { rest: "/rotate-secret" });
    await expectOAuthError(response, 400, "invalid_request", /public/);
    expect((await globalRow(client.client_id))?.secretHash).toBeNull();
  });

  it("leaves exactly one previous secret after concurrent rotations, the newest, in the global row and every copy", async () => {
    const client = await register();
    for (const shop of SHOPS) await connect(client, shop);
    const before = await globalRow(client.client_id);
    const answers = await Promise.all([1, 2, 3].map(() => rotate(client)));
    const secrets = answers.map((answer) => answer.client_secret);
    const stored = await expectCopiesAsGlobal(client.client_id);
    // Applied one after the other: the last one's is current, the one it replaced previous; the first is gone.
    expect(stored?.revision).toBe((before?.revision ?? 0) + 3);
    const accepted = [];
    for (const secret of [client.client_secret ?? "", ...secrets]) {
      if ((await revokeWith(client, secret)).status === 200) accepted.push(sha256Hex(secret));
    }
    expect(accepted.sort()).toEqual([stored?.secretHash, stored?.previousSecretHash].sort());
    expect(secrets.map(sha256Hex)).toEqual(expect.arrayContaining(accepted));
  });
});

describe("deleting the registration (RFC 7592 §2.3)", () => {
  const grantsRevoked = async (clientId: string) =>
    Promise.all(
      SHARD_NAMES.map((shard) =>
        shardDb(shard)
          .select({ revokedAt: oauthGrants.revokedAt })
          .from(oauthGrants)
          .where(eq(oauthGrants.clientId, clientId)),
      ),
    ).then((rows) => rows.flat().map((row) => row.revokedAt !== null));

  it("answers 204; from then on the client is unknown: token requests refused, its access tokens and endpoints gone in eu1 and us1", async () => {
    const client = await register();
    const connections = [];
    for (const shop of SHOPS) connections.push({ shop, tokens: await connect(client, shop) });
    const hook = await call("/api/v1/webhooks", {
      key: connections[0]?.tokens.access_token,
      method: "POST",
      body: { url: "https://partner.example/hooks" },
    });
    await expect(hook).toHaveStatus(201);
    const pendingCode = await authorizationCode(client, eu.owner);

    const response = await manage("DELETE", client);
    await expect(response).toHaveStatus(204);
    expect(await response.text()).toBe("");
    expect(response.headers.get("Cache-Control")).toBe("no-store");

    const secret = client.client_secret ?? "";
    for (const { shop, tokens } of connections) {
      await expect(await me(tokens.access_token), shop.shard).toHaveStatus(401);
      await expectOAuthError(await refreshWith(client, secret, tokens.refresh_token), 401, "invalid_client");
    }
    const exchange = await withSecret(client, secret, {
      grant_type: "authorization_code",
      code: pendingCode.code,
      redirect_uri: pendingCode.redirectUri,
      code_verifier: pendingCode.verifier,
    });
    await expectOAuthError(exchange, 401, "invalid_client");
    await expectOAuthError(await revokeWith(client, secret), 401, "invalid_client");
    expect(await grantsRevoked(client.client_id)).toEqual([true, true]);
    const hookId = (await json<{ id: number }>(hook)).id;
    expect(await shardDb("eu1").$count(webhookEndpoints, eq(webhookEndpoints.id, hookId))).toBe(0);
    // Deleted everywhere; the token's hash is cleared last, in the global row, where alone it is read.
    const deleted = await globalRow(client.client_id);
    expect(deleted).toMatchObject({ deletedAt: expect.any(String), secretHash: null, registrationTokenHash: null });
    for (const { shop } of connections) {
      expect(await rowIn(shop.shard, client.client_id)).toEqual({
        ...deleted,
        registrationTokenHash: expect.any(String),
      });
    }

    const { params } = await validAuthorizationParams(client);
    const page = await browse(new CookieJar(), `/oauth/authorize?${authorizeQuery(params)}`);
    expect(await page.text()).toMatch(/No app is registered/);
    await expectInvalidToken(await manage("GET", client));
    await expectInvalidToken(await manage("DELETE", client));
  });

  it("answers 500 when a shard fails half-way, and sent again finishes: that shard's tokens are refused too", async () => {
    expectServerErrors();
    const client = await register();
    const inUs = await connect(client, us);
    const failing = await call(`/api/oauth/register/${client.client_id}`, {
      method: "DELETE",
      key: client.registration_access_token,
      bindings: { SHARD_US1: failingBatches(env.SHARD_US1) },
    });
    expect(failing.status).toBe(500);
    await expectInvalidToken(await manage("GET", client));
    await expect(await manage("DELETE", client)).toHaveStatus(204);
    await expect(await me(inUs.access_token)).toHaveStatus(401);
    await expectOAuthError(
      await refreshWith(client, client.client_secret ?? "", inUs.refresh_token),
      401,
      "invalid_client",
    );
    expect(await grantsRevoked(client.client_id)).toEqual([true]);
  });
});

describe("an approval after a change", () => {
  it("brings a shard's stale copy to the client's registration: a secret rotated out stops there too", async () => {
    const client = await register();
    await connect(client, eu);
    const rotated = await rotate(client, { expires_in: 0 });
    // A copy left behind, as if the rotation's write to eu1 had been lost.
    const latest = await globalRow(client.client_id);
    await shardDb("eu1")
      .update(oauthClients)
      .set({ secretHash: sha256Hex(client.client_secret ?? ""), previousSecretHash: null, revision: 0 })
      .where(eq(oauthClients.id, client.client_id));
    const another = await createOwnerBusiness({ shard: "eu1" });
    const tokens = await connect({ ...client, client_secret: rotated.client_secret }, another);
    expect(await rowIn("eu1", client.client_id)).toEqual(latest);
    await expectOAuthError(
      await refreshWith(client, client.client_secret ?? "", tokens.refresh_token),
      401,
      "invalid_client",
    );
  });
});
