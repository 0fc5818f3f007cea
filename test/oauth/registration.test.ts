import { eq, like } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oauthClients } from "../../src/db/schema";
import { REGISTRATIONS_PER_MINUTE } from "../../src/domain/oauth/clients";
import { sha256Hex } from "../../src/lib/secrets";
import {
  MAX_CLIENT_METADATA_BYTES,
  MAX_CLIENT_NAME_LENGTH,
  MAX_REDIRECT_URI_LENGTH,
  MAX_REDIRECT_URIS,
} from "../../src/schemas/oauth";
import { globalDb } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { expectOAuthError, ISSUER, REDIRECT_URI, type RegisteredClient, register } from "../helpers/oauth";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";

describe("discovery (RFC 8414; docs/oauth.md, Endpoints)", () => {
  it("publishes the metadata docs/oauth.md lists, with absolute endpoints and the base address as issuer", async () => {
    const response = await call("/.well-known/oauth-authorization-server");
    await expect(response).toHaveStatus(200);
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(await json(response)).toEqual({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}/oauth/authorize`,
      token_endpoint: `${ISSUER}/api/oauth/token`,
      registration_endpoint: `${ISSUER}/api/oauth/register`,
      revocation_endpoint: `${ISSUER}/api/oauth/revoke`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token", "client_credentials"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic", "none"],
      revocation_endpoint_auth_methods_supported: ["client_secret_post", "client_secret_basic", "none"],
      scopes_supported: ["api", "app"],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      // RFC 9728 §4: the resource its tokens are for (test/oauth/resource-metadata.test.ts).
      protected_resources: [`${ISSUER}/api/v1`],
    });
  });

  it("drops a trailing slash of BASE_URL from the issuer", async () => {
    const response = await call("/.well-known/oauth-authorization-server", {
      bindings: { BASE_URL: "https://partners.example/" },
    });
    const body = await json(response);
    expect(body.issuer).toBe("https://partners.example");
    expect(body.token_endpoint).toBe("https://partners.example/api/oauth/token");
    expect(body.protected_resources).toEqual(["https://partners.example/api/v1"]);
  });
});

describe("registration (RFC 7591; spec: Partner sign-in, step 1)", () => {
  it.each(["client_secret_post", "client_secret_basic"] as const)(
    "registers a %s client and shows its secret once, storing only its hash",
    async (method) => {
      const response = await register({
        client_name: "Booking Tool",
        redirect_uris: [REDIRECT_URI, "http://127.0.0.1:9000/cb"],
        token_endpoint_auth_method: method,
      });
      await expect(response).toHaveStatus(201);
      expect(response.headers.get("Cache-Control")).toBe("no-store");
      const body = await json<RegisteredClient & Record<string, unknown>>(response);
      expect(body).toEqual({
        client_id: expect.stringMatching(/^cl_[A-Za-z0-9_-]{22}$/),
        client_secret: expect.stringMatching(/^cs_live_[A-Za-z0-9_-]{43}$/),
        client_secret_expires_at: 0,
        client_id_issued_at: expect.any(Number),
        client_name: "Booking Tool",
        redirect_uris: [REDIRECT_URI, "http://127.0.0.1:9000/cb"],
        token_endpoint_auth_method: method,
        grant_types: ["authorization_code", "refresh_token", "client_credentials"],
        response_types: ["code"],
        scope: "api",
        // RFC 7592 §3 (docs/oauth.md, Managing your app; test/oauth/client-management.test.ts).
        registration_access_token: expect.stringMatching(/^rat_live_[A-Za-z0-9_-]{43}$/),
        registration_client_uri: `${ISSUER}/api/oauth/register/${body.client_id}`,
      });
      const stored = await globalDb.select().from(oauthClients).where(eq(oauthClients.id, body.client_id)).get();
      expect(stored?.secretHash).toBe(sha256Hex(body.client_secret ?? ""));
      expect(JSON.stringify(stored)).not.toContain(body.client_secret);
    },
  );

  it("registers a public client (none) without a secret", async () => {
    const response = await register({
      client_name: "CLI",
      redirect_uris: ["http://localhost/cb"],
      token_endpoint_auth_method: "none",
    });
    await expect(response).toHaveStatus(201);
    const body = await json(response);
    expect(body).not.toHaveProperty("client_secret");
    expect(body).not.toHaveProperty("client_secret_expires_at");
    expect(body.token_endpoint_auth_method).toBe("none");
    // It has no credentials to be itself with (docs/oauth.md, The app as itself).
    expect(body.grant_types).toEqual(["authorization_code", "refresh_token"]);
    const stored = await globalDb
      .select()
      .from(oauthClients)
      .where(eq(oauthClients.id, String(body.client_id)))
      .get();
    expect(stored?.secretHash).toBeNull();
  });

  it("defaults token_endpoint_auth_method to client_secret_basic, as RFC 7591 §2 does", async () => {
    const body = await json(await register({ client_name: "Shop", redirect_uris: [REDIRECT_URI] }));
    expect(body.token_endpoint_auth_method).toBe("client_secret_basic");
    expect(body.client_secret).toEqual(expect.any(String));
  });

  it("accepts grant_types, response_types and scope that describe what it does, ignores unknown metadata", async () => {
    const response = await register({
      client_name: "Shop",
      redirect_uris: [REDIRECT_URI, REDIRECT_URI],
      grant_types: ["authorization_code"],
      response_types: ["code"],
      scope: "api",
      logo_uri: "https://partner.example/logo.png",
      client_id: "chosen-by-me",
    });
    await expect(response).toHaveStatus(201);
    const body = await json(response);
    expect(body.redirect_uris).toEqual([REDIRECT_URI]);
    expect(body.client_id).not.toBe("chosen-by-me");
    expect(body).not.toHaveProperty("logo_uri");
  });

  it.each([
    ["none", []],
    ["redirect_uris missing", undefined],
    ["not an array", REDIRECT_URI],
    ["http outside loopback", ["http://partner.example/cb"]],
    ["http on a private address", ["http://192.168.1.10/cb"]],
    ["http on a name ending in localhost", ["http://app.localhost/cb"]],
    ["a custom scheme", ["com.partner.app:/callback"]],
    ["a relative URI", ["/callback"]],
    ["a fragment", ["https://partner.example/cb#done"]],
    ["user info", ["https://user:pass@partner.example/cb"]],
    ["a space", ["https://partner.example/c b"]],
    ["not a string", [42]],
  ])("refuses redirect_uris with %s: invalid_redirect_uri", async (_case, redirectUris) => {
    const response = await register({ client_name: "Shop", redirect_uris: redirectUris });
    await expectOAuthError(response, 400, "invalid_redirect_uri", /redirect_uris/);
  });

  it.each([
    ["http://localhost/cb"],
    ["http://localhost:3000/cb"],
    ["http://127.0.0.1:8080/callback?x=1"],
    ["http://[::1]/cb"],
    ["https://partner.example/cb?tenant=7"],
  ])("accepts %s", async (uri) => {
    await expect(await register({ client_name: "Shop", redirect_uris: [uri] })).toHaveStatus(201);
  });

  it.each([
    ["no client_name", { redirect_uris: [REDIRECT_URI] }, /client_name/],
    ["an empty client_name", { client_name: "  ", redirect_uris: [REDIRECT_URI] }, /client_name/],
    [
      "a client_name over 100 characters",
      { client_name: "x".repeat(101), redirect_uris: [REDIRECT_URI] },
      /client_name/,
    ],
    ["a control character in client_name", { client_name: "Shop\u0007", redirect_uris: [REDIRECT_URI] }, /client_name/],
    [
      "an unknown auth method",
      { client_name: "Shop", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "private_key_jwt" },
      /token_endpoint_auth_method/,
    ],
    [
      "an unsupported grant type",
      { client_name: "Shop", redirect_uris: [REDIRECT_URI], grant_types: ["implicit"] },
      /grant_types/,
    ],
    [
      "an unsupported response type",
      { client_name: "Shop", redirect_uris: [REDIRECT_URI], response_types: ["token"] },
      /response_types/,
    ],
    ["another scope", { client_name: "Shop", redirect_uris: [REDIRECT_URI], scope: "admin" }, /scope/],
  ])("refuses %s: invalid_client_metadata", async (_case, body, member) => {
    await expectOAuthError(await register(body), 400, "invalid_client_metadata", member);
  });

  it.each([
    ["a JSON array", "[]", "application/json"],
    ["malformed JSON", "{", "application/json"],
    ["a form body", "client_name=Shop", "application/x-www-form-urlencoded"],
  ])("refuses %s: invalid_client_metadata", async (_case, body, type) => {
    const response = await call("/api/oauth/register", { method: "POST", body, headers: { "Content-Type": type } });
    await expectOAuthError(response, 400, "invalid_client_metadata");
  });

  it("does not answer browsers' CORS preflights (no CORS on the OAuth endpoints)", async () => {
    const response = await call("/api/oauth/register", {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
    });
    expect(response.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });
});

describe("registration stores bounded metadata (docs/guides/oauth.md, 1. Register once)", () => {
  // Each test's redirect URIs carry a token of its own, so that its stored clients are counted apart from others'.
  const fresh = () => {
    const token = crypto.randomUUID();
    const uri = (length: number, n = 0) => `https://partner.example/${token}/${n}/`.padEnd(length, "a");
    const stored = () => globalDb.$count(oauthClients, like(oauthClients.redirectUris, `%${token}%`));
    return { uri, stored };
  };
  type Uri = ReturnType<typeof fresh>["uri"];

  it(`stores redirect URIs of ${MAX_REDIRECT_URI_LENGTH} characters and ${MAX_CLIENT_METADATA_BYTES} bytes in all; one more is invalid_client_metadata`, async () => {
    const { uri, stored } = fresh();
    // "Bounded" (7 bytes) and ["<512>","<498>"] (512 + 498 + 7 bytes): 1,024 bytes to store.
    const atBounds = await register({ client_name: "Bounded", redirect_uris: [uri(512), uri(498, 1)] });
    await expect(atBounds).toHaveStatus(201);
    const overAll = await register({ client_name: "Bounded", redirect_uris: [uri(512), uri(499, 1)] });
    await expectOAuthError(
      overAll,
      400,
      "invalid_client_metadata",
      /^The request body has 1025 bytes of client_name and redirect_uris to store: at most 1024 are allowed\.$/,
    );
    const overOne = await register({ client_name: "Bounded", redirect_uris: [uri(MAX_REDIRECT_URI_LENGTH + 1)] });
    await expectOAuthError(
      overOne,
      400,
      "invalid_client_metadata",
      /^The member "redirect_uris\[0\]" must be at most 512 characters long\.$/,
    );
    expect(await stored()).toBe(1);
  });

  it("counts the bytes stored, not characters: a name of 100 ü takes 200 of them", async () => {
    const { uri, stored } = fresh();
    const name = "ü".repeat(MAX_CLIENT_NAME_LENGTH);
    // 200 + (512 + 305 + 7) = 1,024 bytes, in 924 characters; one character more is 1,025 bytes.
    await expect(await register({ client_name: name, redirect_uris: [uri(512), uri(305, 1)] })).toHaveStatus(201);
    const over = await register({ client_name: name, redirect_uris: [uri(512), uri(306, 1)] });
    await expectOAuthError(over, 400, "invalid_client_metadata", /has 1025 bytes of client_name and redirect_uris/);
    expect(await stored()).toBe(1);
  });

  it.each([
    [
      "one redirect URI of 10,000 characters",
      (uri: Uri) => ({ redirect_uris: [uri(10_000)] }),
      /"redirect_uris\[0\]" must be at most 512 characters/,
    ],
    [
      "five redirect URIs of 2,000 characters",
      (uri: Uri) => ({ redirect_uris: [0, 1, 2, 3, 4].map((i) => uri(2000, i)) }),
      /"redirect_uris\[0\]" must be at most 512 characters/,
    ],
    [
      "a client_name of 10,000 characters",
      (uri: Uri) => ({ client_name: "x".repeat(10_000), redirect_uris: [uri(100)] }),
      /"client_name" must be at most 100 characters/,
    ],
    [
      `${MAX_REDIRECT_URIS + 1} redirect URIs`,
      (uri: Uri) => ({ redirect_uris: [0, 1, 2, 3, 4, 5].map((i) => uri(100, i)) }),
      /"redirect_uris" must have at most 5 items/,
    ],
  ])("refuses %s with 400 invalid_client_metadata, storing nothing", async (_case, metadata, member) => {
    const { uri, stored } = fresh();
    const response = await register({ client_name: "Too big", ...metadata(uri) });
    await expectOAuthError(response, 400, "invalid_client_metadata", member);
    expect(await stored()).toBe(0);
  });

  it("ignores 10 KB of members it does not use: the stored row holds only the bounded ones", async () => {
    const { uri } = fresh();
    const response = await register({ client_name: "Padded", redirect_uris: [uri(100)], logo_uri: uri(10_000) });
    await expect(response).toHaveStatus(201);
    const { client_id } = await json<RegisteredClient>(response);
    const row = await globalDb.select().from(oauthClients).where(eq(oauthClients.id, client_id)).get();
    expect(JSON.stringify(row).length).toBeLessThan(600);
  });
});

describe("registration is limited per client address (docs/architecture.md, OAuth)", () => {
  // Fresh addresses and names per test: the binding's counts and the stored clients are shared with other tests.
  const random = () => crypto.getRandomValues(new Uint16Array(1))[0] ?? 0;
  const freshIPv4 = () => `198.18.${random() % 256}.${random() % 256}`;
  const freshName = () => `Limited ${crypto.randomUUID()}`;
  const registerFrom = (address: string | undefined, clientName: string) =>
    register(
      { client_name: clientName, redirect_uris: [REDIRECT_URI] },
      address === undefined ? {} : { "CF-Connecting-IP": address },
    );
  const storedNamed = (name: string) => globalDb.$count(oauthClients, like(oauthClients.clientName, `${name}%`));

  // A test that waits past a window's edge (at most 5 s) gets that time on top of its own.
  const WINDOW_TIMEOUT = { timeout: 15_000 };

  it(
    `answers 429 with Retry-After past ${REGISTRATIONS_PER_MINUTE} registrations a minute from one address, storing nothing`,
    WINDOW_TIMEOUT,
    async () => {
      await awayFromWindowEdge();
      const address = freshIPv4();
      const name = freshName();
      for (let i = 0; i < REGISTRATIONS_PER_MINUTE; i++) {
        await expect(await registerFrom(address, `${name} ${i}`)).toHaveStatus(201);
      }
      const refused = await registerFrom(address, `${name} refused`);
      expect(refused.headers.get("Retry-After")).toBe("60");
      expect(refused.headers.get("RateLimit-Policy")).toBe(`"client_registrations";q=${REGISTRATIONS_PER_MINUTE};w=60`);
      expect(refused.headers.get("RateLimit")).toBe('"client_registrations";r=0;t=60');
      expect(refused.headers.get("Cache-Control")).toBe("no-store");
      // The service's 429 (docs/errors.md, Codes), as every rate limit here answers: a rate limit is no RFC 7591 error.
      await expectError(
        refused,
        429,
        `Too many registrations from this address: at most ${REGISTRATIONS_PER_MINUTE} a minute. Register once and keep the client_id.`,
        { code: "rate_limited", param: undefined },
      );
      expect(await storedNamed(name)).toBe(REGISTRATIONS_PER_MINUTE);
      await expect(await registerFrom(freshIPv4(), `${name} elsewhere`)).toHaveStatus(201);
    },
  );

  it(
    "counts an IPv6 client by its /48: stepping through its /64s does not pass the limit",
    WINDOW_TIMEOUT,
    async () => {
      await awayFromWindowEdge();
      // A site's /48 (2001:db8:n::/48) and the next one; the /64s of one differ in their fourth group.
      const n = random();
      const site = `2001:db8:${n.toString(16)}`;
      const nextSite = `2001:db8:${((n + 1) % 0x10000).toString(16)}`;
      const name = freshName();
      for (let i = 1; i <= REGISTRATIONS_PER_MINUTE; i++) {
        await expect(await registerFrom(`${site}:${i.toString(16)}::1`, `${name} ${i}`)).toHaveStatus(201);
      }
      // Another /64 of the same /48, and another host of one already used: the same budget.
      await expect(await registerFrom(`${site}:ffff::1`, `${name} refused`)).toHaveStatus(429);
      await expect(await registerFrom(`${site}:1:2:3:4:5`, `${name} refused too`)).toHaveStatus(429);
      await expect(await registerFrom(`${nextSite}:1::1`, `${name} elsewhere`)).toHaveStatus(201);
      expect(await storedNamed(name)).toBe(REGISTRATIONS_PER_MINUTE + 1);
    },
  );

  it(
    "does not limit a request without CF-Connecting-IP: it did not come from the internet (a service binding, a test)",
    WINDOW_TIMEOUT,
    async () => {
      await awayFromWindowEdge();
      const name = freshName();
      for (let i = 0; i <= REGISTRATIONS_PER_MINUTE; i++) {
        await expect(await registerFrom(undefined, `${name} ${i}`)).toHaveStatus(201);
      }
    },
  );
});
