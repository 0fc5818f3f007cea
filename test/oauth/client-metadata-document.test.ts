import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { oauthClients, oauthGrants } from "../../src/db/schema";
import { shardBinding } from "../../src/db/shard-bindings";
import { SHARD_NAMES, SHARDS, type ShardName } from "../../src/db/shards";
import { removeUnapprovedClients, UNAPPROVED_CLIENT_LIFETIME_MS } from "../../src/domain/oauth/client-cleanup";
import { MAX_FRESH_MS, MIN_FRESH_MS } from "../../src/domain/oauth/client-metadata-documents";
import { REGISTRATIONS_PER_MINUTE } from "../../src/domain/oauth/clients";
import { expectErrorPage } from "../helpers/authorize";
import { countingD1 } from "../helpers/counting-d1";
import { page, signedIn } from "../helpers/dashboard";
import { deps } from "../helpers/dependencies";
import { globalDb, shardDb } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import {
  authorizationCode,
  authorizeQuery,
  CookieJar,
  createOwnerBusiness,
  expectOAuthError,
  me,
  postToken,
  type RegisteredClient,
  refresh,
  signIn,
  type Tokens,
  validAuthorizationParams,
} from "../helpers/oauth";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";
import type { RecordedRequest } from "../recorded-request";

// docs/oauth.md, Client ID metadata documents: an app whose client_id is an https URL (http to loopback in tests, where
// ALLOW_LOOPBACK_URLS is true) is described by the JSON document at that URL, which the test receiver serves
// (test/receiver.ts, `/<box>/cimd/<caching>/<document>`, its client_id the URL itself unless the document names
// another). The authorization page reads it and keeps it as a client for as long as its caching headers say, within
// 5 minutes and 24 hours; the token endpoint never reads it. The clock is driven by faking `Date` (the routes read
// `Date.now()`), never by sleeping.

const RECEIVER_HOST = new URL(env.RECEIVER_URL).host;
const CALLBACK = "https://claude.ai/api/mcp/auth_callback";
const CLAUDE = { client_name: "Claude", redirect_uris: [CALLBACK], token_endpoint_auth_method: "none" };

const eu = await createOwnerBusiness({ shard: "eu1", name: "Bella Hair Studio" });
const us = await createOwnerBusiness({ shard: "us1" });

afterEach(() => {
  vi.useRealTimers();
});

/**
 * A box of the receiver, its name short: a document's URL carries the document and must stay within 255 characters.
 * `document` is the URL of a document of those members served with that caching; `fetches`, what reached the box.
 */
function appServer() {
  const box = `d${crypto.randomUUID().slice(0, 8)}`;
  const at = (path: string) => `${env.RECEIVER_URL}/${box}${path}`;
  return {
    at,
    document: (members: object = CLAUDE, caching = "-") =>
      at(`/cimd/${encodeURIComponent(caching)}/${encodeURIComponent(JSON.stringify(members))}`),
    fetches: async () => (await (await fetch(`${env.RECEIVER_URL}/__recorded/${box}`)).json()) as RecordedRequest[],
  };
}

/** The app as the helpers of test/helpers/oauth.ts take it: a public client whose client_id is the URL. */
const app = (url: string): RegisteredClient => ({
  client_id: url,
  client_name: CLAUDE.client_name,
  redirect_uris: CLAUDE.redirect_uris,
  token_endpoint_auth_method: "none",
});

const authorizationPage = async (client: RegisteredClient, headers: Record<string, string> = {}) =>
  call(`/oauth/authorize?${authorizeQuery((await validAuthorizationParams(client)).params)}`, { headers });

/** The sentence of an error page, as the owner reads it. */
async function pageError(response: Response) {
  const html = /<p class="error" role="alert">([^<]*)<\/p>/.exec(await response.text())?.[1] ?? "";
  return html
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&");
}

const storedClient = (id: string) => globalDb.select().from(oauthClients).where(eq(oauthClients.id, id)).get();
const copyIn = (shard: ShardName, id: string) =>
  shardDb(shard).select().from(oauthClients).where(eq(oauthClients.id, id)).get();

/** Freezes `Date` at `at`: every request then runs at that instant, until `vi.setSystemTime`. */
function freezeClock(at = Date.now()) {
  vi.useFakeTimers({ toFake: ["Date"], now: at });
  return at;
}

async function exchange(client: RegisteredClient, owner: typeof eu.owner) {
  const grant = await authorizationCode(client, owner);
  const response = await postToken({
    grant_type: "authorization_code",
    code: grant.code,
    redirect_uri: grant.redirectUri,
    code_verifier: grant.verifier,
    client_id: client.client_id,
  });
  await expect(response).toHaveStatus(200);
  return json<Tokens>(response);
}

describe("an app known by its metadata document connects like a registered one", () => {
  it("authorize, consent, code, token and /api/v1/me for a business in eu1 and one in us1, reading the document once", async () => {
    const server = appServer();
    const claude = app(server.document(CLAUDE, "max-age=3600"));
    for (const shop of [eu, us]) {
      const tokens = await exchange(claude, shop.owner);
      const answer = await me(tokens.access_token);
      await expect(answer).toHaveStatus(200);
      expect((await json(answer)).id).toBe(shop.business.id);
      // The approval copied the client into the business's shard, where the token endpoint found it.
      expect(await copyIn(shop.shard, claude.client_id)).toMatchObject({ clientName: "Claude", secretHash: null });
      const grant = await shardDb(shop.shard)
        .select()
        .from(oauthGrants)
        .where(eq(oauthGrants.clientId, claude.client_id))
        .get();
      expect(grant?.businessId).toBe(shop.business.id);
      await expect(await refresh(claude, tokens.refresh_token)).toHaveStatus(200);
    }
    const fetches = await server.fetches();
    expect(fetches).toHaveLength(1);
    expect(fetches[0]).toMatchObject({ method: "GET", headers: { accept: "application/json" } });
    expect(fetches[0]?.headers["user-agent"]).toMatch(/-OAuth\/1\.0 \(\+http:\/\/localhost:8787\)$/);
    expect(await storedClient(claude.client_id)).toMatchObject({
      clientName: "Claude",
      redirectUris: [CALLBACK],
      tokenEndpointAuthMethod: "none",
      secretHash: null,
      registrationTokenHash: null,
    });
  });

  it("shows the owner the name as the app's own claim, with the host of its client_id", async () => {
    const claude = app(appServer().document());
    const { params } = await validAuthorizationParams(claude);
    const signInPage = await authorizationPage(claude);
    expect(await signInPage.text()).toContain(
      `<strong>Claude</strong> (as it names itself) from <strong>${RECEIVER_HOST}</strong> asks to connect`,
    );
    const consent = await signIn(new CookieJar(), authorizeQuery(params), eu.owner);
    await expect(consent).toHaveStatus(200);
    const html = await consent.text();
    expect(html).toContain("Connect Claude to Bella Hair Studio?");
    expect(html).toContain(
      `<strong>Claude</strong> (as it names itself) from <strong>${RECEIVER_HOST}</strong> will be able to:`,
    );
    expect(html).toContain("Either way you go back to claude.ai.");
  });

  it("lists the app with its host among the owner's connected apps", async () => {
    const shop = await createOwnerBusiness({ shard: "eu1" });
    const claude = app(appServer().document());
    await exchange(claude, shop.owner);
    const apps = await page(await signedIn(shop), "/dashboard/apps");
    expect(apps.status).toBe(200);
    expect(apps.html).toContain(
      `<strong>Claude</strong><span class="muted"> (as it names itself) from ${RECEIVER_HOST}</span>`,
    );
  });

  it("revokes with the client_id alone, as any public client", async () => {
    const claude = app(appServer().document());
    const tokens = await exchange(claude, us.owner);
    const revoked = await postToken(
      { token: tokens.refresh_token, client_id: claude.client_id },
      { path: "/api/oauth/revoke" },
    );
    await expect(revoked).toHaveStatus(200);
    await expect(await me(tokens.access_token)).toHaveStatus(401);
  });
});

describe("a document that cannot be used: an error page, never a redirect, and invalid_client at the token endpoint", () => {
  const server = appServer();
  const misnamed = { client_id: "https://claude.ai/c", client_name: "Claude", redirect_uris: [CALLBACK] };
  it.each([
    [
      "a client_id that is not its URL",
      server.document(misnamed),
      "its client_id is not the URL it is at, character for character.",
    ],
    ["no redirect_uris", server.document({ client_name: "Claude" }), 'its member "redirect_uris" is required.'],
    ["no client_name", server.document({ redirect_uris: [CALLBACK] }), 'its member "client_name" is required.'],
    [
      "a redirect URI that registration refuses",
      server.document({ ...CLAUDE, redirect_uris: ["http://claude.ai/cb"] }),
      'its member "redirect_uris[0]" must use https (http is allowed only for localhost, 127.0.0.1 and [::1]).',
    ],
    [
      "a secret method",
      server.document({ ...CLAUDE, token_endpoint_auth_method: "client_secret_basic" }),
      "its token_endpoint_auth_method must be none: a published document cannot hold a client secret, so the app is a public client, proven by PKCE.",
    ],
    [
      "a client_secret",
      server.document({ ...CLAUDE, client_secret: "published" }),
      "its token_endpoint_auth_method must be none: a published document cannot hold a client secret, so the app is a public client, proven by PKCE.",
    ],
    ["not an object", server.at(`/json/${encodeURIComponent(JSON.stringify([CLAUDE]))}`), "it is not a JSON object."],
    ["not JSON", server.at("/text"), "it is not JSON."],
    ["over 5 KB", server.at("/bytes/5121"), "it is larger than 5 KB."],
    ["a 404", server.at("/status/404"), "it answered 404."],
    [
      "a redirect",
      server.at("/redirect"),
      "it answered 302, a redirect, which is not followed: serve the document at the client_id itself.",
    ],
    ["a private address", "https://claude.private.test/oauth/client", "the host resolves to a private address."],
    ["http outside loopback", "http://claude.public.test/oauth/client", "the url must use https."],
  ])("%s", async (_case, url, sentence) => {
    const response = await authorizationPage(app(url));
    await expectErrorPage(response.clone(), /metadata document/);
    expect(await pageError(response)).toBe(
      `The app's metadata document, at its client_id, cannot be used: ${sentence}`,
    );
    expect(await storedClient(url)).toBeUndefined();
    const token = await postToken({ grant_type: "refresh_token", refresh_token: "rt_x", client_id: url });
    await expectOAuthError(token, 401, "invalid_client", /No client is registered with this client_id/);
  });

  it("refuses an http client_id outside loopback development, as webhook URLs are: https only", async () => {
    const url = server.document();
    const { params } = await validAuthorizationParams(app(url));
    const production = await call(`/oauth/authorize?${authorizeQuery(params)}`, {
      bindings: { ALLOW_LOOPBACK_URLS: "false" },
    });
    await expectErrorPage(production, /cannot be used: the url must use https\./);
    await expect(await authorizationPage(app(url))).toHaveStatus(200);
  });

  it.each([
    ["a fragment", "https://claude.ai/oauth/client#me", /The client_id must not contain a fragment/],
    ["a user name", "https://me:pw@claude.ai/oauth/client", /The client_id must not contain a user name or password/],
    ["a dot segment", "https://claude.ai/oauth/../client", /The client_id must not contain \. or \.\. path segments/],
    ["an encoded dot segment", "https://claude.ai/oauth/%2E/client", /must not contain \. or \.\. path segments/],
    ["no path", "https://claude.ai", /The client_id must have a path after its host/],
    ["256 characters", `https://claude.ai/${"a".repeat(238)}`, /The client_id must be at most 255 characters long/],
  ])("refuses a client_id URL with %s before reading anything", async (_case, url, sentence) => {
    await expectErrorPage(await authorizationPage(app(url)), sentence);
  });

  it("refuses a redirect_uri the document does not list, though the document is good", async () => {
    const claude = app(server.document());
    const { params } = await validAuthorizationParams(claude, { redirect_uri: "https://claude.ai/other" });
    await expectErrorPage(
      await call(`/oauth/authorize?${authorizeQuery(params)}`),
      /The redirect_uri is not one of the redirect_uris of the app&#39;s metadata document\./,
    );
  });
});

describe("the document is kept as long as its caching headers say, within 5 minutes and 24 hours", () => {
  it("reads it again only once max-age has passed", async () => {
    const server = appServer();
    const claude = app(server.document(CLAUDE, "public, max-age=600"));
    const start = freezeClock();
    await expect(await authorizationPage(claude)).toHaveStatus(200);
    const first = await storedClient(claude.client_id);
    expect(first).toMatchObject({
      metadataFetchedAt: new Date(start).toISOString(),
      metadataFreshUntil: new Date(start + 600_000).toISOString(),
    });
    vi.setSystemTime(start + 599_000);
    await expect(await authorizationPage(claude)).toHaveStatus(200);
    expect(await server.fetches()).toHaveLength(1);
    vi.setSystemTime(start + 600_000);
    await expect(await authorizationPage(claude)).toHaveStatus(200);
    expect(await server.fetches()).toHaveLength(2);
    expect((await storedClient(claude.client_id))?.metadataFetchedAt).toBe(new Date(start + 600_000).toISOString());
  });

  it.each([
    ["no caching header", "-", MIN_FRESH_MS],
    ["no-store", "no-store", MIN_FRESH_MS],
    ["max-age under 5 minutes", "max-age=60", MIN_FRESH_MS],
    ["max-age over 24 hours", "max-age=864000", MAX_FRESH_MS],
    ["s-maxage alone", "s-maxage=3600", MIN_FRESH_MS],
  ])("%s: fresh for %s ms", async (_case, caching, ms) => {
    const claude = app(appServer().document(CLAUDE, caching));
    const start = freezeClock();
    await expect(await authorizationPage(claude)).toHaveStatus(200);
    expect((await storedClient(claude.client_id))?.metadataFreshUntil).toBe(new Date(start + ms).toISOString());
  });

  it("Expires, without max-age: fresh until then, counted from the answer's Date", async () => {
    const claude = app(appServer().document(CLAUDE, "expires=1200"));
    const start = freezeClock();
    await expect(await authorizationPage(claude)).toHaveStatus(200);
    const freshUntil = Date.parse((await storedClient(claude.client_id))?.metadataFreshUntil ?? "");
    expect(freshUntil - start).toBeGreaterThanOrEqual(1_199_000);
    expect(freshUntil - start).toBeLessThanOrEqual(1_201_000);
  });

  it("refuses a stale reading whose document cannot be read again, and keeps the reading", async () => {
    const server = appServer();
    const url = server.at("/status/404");
    // A reading of the document from before it went away, stale since a second ago.
    const stale = new Date(Date.now() - 1000).toISOString();
    await globalDb.insert(oauthClients).values({
      id: url,
      clientName: "Claude",
      redirectUris: [CALLBACK],
      tokenEndpointAuthMethod: "none",
      createdAt: stale,
      metadataFetchedAt: stale,
      metadataFreshUntil: stale,
    });
    await expectErrorPage(await authorizationPage(app(url)), /cannot be used: it answered 404\./);
    expect(await server.fetches()).toHaveLength(1);
    expect((await storedClient(url))?.metadataFreshUntil).toBe(stale);
  });

  it("uses a stale copy as it is at the token endpoint, reading nothing", async () => {
    const server = appServer();
    const claude = app(server.document());
    const start = freezeClock();
    const tokens = await exchange(claude, eu.owner);
    vi.setSystemTime(start + MAX_FRESH_MS + 1);
    await expect(await refresh(claude, tokens.refresh_token)).toHaveStatus(200);
    expect(await server.fetches()).toHaveLength(1);
  });

  it("exchanges a code of a stale reading in the token endpoint's two round trips, both in the shard", async () => {
    const server = appServer();
    const claude = app(server.document());
    const start = freezeClock();
    const grant = await authorizationCode(claude, us.owner);
    vi.setSystemTime(start + MIN_FRESH_MS + 1);
    const counted = SHARD_NAMES.map((shard) => ({ shard, ...countingD1(shardBinding(env, shard)) }));
    const bindings = Object.fromEntries(counted.map(({ shard, d1 }) => [SHARDS[shard].binding, d1]));
    const response = await postToken(
      {
        grant_type: "authorization_code",
        code: grant.code,
        redirect_uri: grant.redirectUri,
        code_verifier: grant.verifier,
        client_id: claude.client_id,
      },
      { bindings },
    );
    await expect(response).toHaveStatus(200);
    const trips = Object.fromEntries(counted.map(({ shard, trips }) => [shard, trips.length]));
    expect(trips).toEqual({ ...Object.fromEntries(SHARD_NAMES.map((shard) => [shard, 0])), us1: 2 });
    expect(await server.fetches()).toHaveLength(1);
  });

  it("brings the shards' copies to a reading that changed the name, raising the client's revision", async () => {
    const server = appServer();
    const claude = app(server.document());
    const start = freezeClock();
    await exchange(claude, eu.owner);
    await exchange(claude, us.owner);
    // As if the document had named the app otherwise when it was read.
    for (const db of [globalDb, shardDb("eu1"), shardDb("us1")]) {
      await db.update(oauthClients).set({ clientName: "Claude (old)" }).where(eq(oauthClients.id, claude.client_id));
    }
    const before = await storedClient(claude.client_id);
    vi.setSystemTime(start + MIN_FRESH_MS);
    await expect(await authorizationPage(claude)).toHaveStatus(200);
    const after = await storedClient(claude.client_id);
    expect(after).toMatchObject({ clientName: "Claude", revision: (before?.revision ?? 0) + 1 });
    expect(await copyIn("eu1", claude.client_id)).toEqual(after);
    expect(await copyIn("us1", claude.client_id)).toEqual(after);
  });
});

describe("the clients of documents among unapproved clients", () => {
  it("are removed 24 hours after their first reading unless an owner approved them", async () => {
    const unapproved = app(appServer().document());
    const approved = app(appServer().document());
    await expect(await authorizationPage(unapproved)).toHaveStatus(200);
    await exchange(approved, us.owner);
    const dayAgo = new Date(Date.now() - UNAPPROVED_CLIENT_LIFETIME_MS - 1000).toISOString();
    for (const { client_id } of [unapproved, approved]) {
      await globalDb.update(oauthClients).set({ createdAt: dayAgo }).where(eq(oauthClients.id, client_id));
    }
    await removeUnapprovedClients(deps);
    expect(await storedClient(unapproved.client_id)).toBeUndefined();
    expect(await storedClient(approved.client_id)).toBeDefined();
    // Removed, it is read again at the next authorization, as a new client.
    await expect(await authorizationPage(unapproved)).toHaveStatus(200);
    expect(await storedClient(unapproved.client_id)).toBeDefined();
  });

  it("each reading spends the owner's address's registration budget; a fresh stored one does not", async () => {
    await awayFromWindowEdge();
    const address = `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
    const from = { "CF-Connecting-IP": address };
    const server = appServer();
    const documents = Array.from({ length: REGISTRATIONS_PER_MINUTE + 1 }, (_, n) =>
      app(server.document({ ...CLAUDE, client_name: `Claude ${n}` })),
    );
    for (const client of documents.slice(0, REGISTRATIONS_PER_MINUTE)) {
      await expect(await authorizationPage(client, from)).toHaveStatus(200);
    }
    const refused = await authorizationPage(documents[REGISTRATIONS_PER_MINUTE] as RegisteredClient, from);
    await expect(refused).toHaveStatus(429);
    expect(await refused.text()).toContain("Too many registrations from this address");
    expect(await server.fetches()).toHaveLength(REGISTRATIONS_PER_MINUTE);
    await expect(await authorizationPage(documents[0] as RegisteredClient, from)).toHaveStatus(200);
  });
});
