import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { expect } from "vitest";
import { oauthClients, oauthGrants, oauthTokens, owners, type Plan } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import type { TokenBudget } from "../../src/domain/oauth/token-budget";
import { hashPassword } from "../../src/lib/password";
import { sha256Hex } from "../../src/lib/secrets";
import { createBusiness, DEFAULT_SHARD, db, globalDb, shardDb } from "./fixtures";
import { BASE, call, json } from "./http";

export const REDIRECT_URI = "https://partner.example/oauth/callback";
export const ISSUER = BASE;

let counter = 0;

/**
 * The PBKDF2 iterations of the fixture owners' stored hashes. `hashPassword` takes the count as an argument and
 * `verifyPassword` derives with the count a stored hash names, so a fixture owner signs in through the real code at a
 * hundredth of the cost; hundreds of sign-ins would otherwise spend most of the suite's CPU in PBKDF2. The production
 * count (100,000, src/lib/password.ts) is the default, which test/access/owner-sign-in.test.ts holds to, and an
 * unknown email still costs a full hash.
 */
const FIXTURE_PASSWORD_ITERATIONS = 1_000;

/**
 * A business with its owner account (email and password in the format the seed stores) and an API key, in `shard`
 * (the legacy one unless said; a regional business's owner email is listed in the directory for sign-in).
 */
export async function createOwnerBusiness(
  options: { plan?: Plan; active?: boolean; name?: string; shard?: ShardName } = {},
) {
  const email = `owner-${crypto.randomUUID()}@example.com`;
  const shard = options.shard ?? DEFAULT_SHARD;
  const { business, apiKey } = await createBusiness({ ...options, ownerEmail: email });
  const password = `correct horse ${counter++}`;
  const [owner] = await shardDb(shard)
    .insert(owners)
    .values({
      businessId: business.id,
      email,
      passwordHash: await hashPassword(password, FIXTURE_PASSWORD_ITERATIONS),
      createdAt: business.createdAt,
    })
    .returning();
  if (!owner) throw new Error("owner not created");
  return { business, apiKey, shard, owner: { id: owner.id, email, password } };
}
export type OwnerBusiness = Awaited<ReturnType<typeof createOwnerBusiness>>;

export type RegisteredClient = {
  client_id: string;
  client_secret?: string;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: "client_secret_basic" | "client_secret_post" | "none";
};

export const register = (body: unknown, headers: Record<string, string> = {}) =>
  call("/api/oauth/register", { method: "POST", body, headers });

/** Registers a client through the API (the test fails loudly if the service refuses). */
export async function registerClient(overrides: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const response = await register({
    client_name: `Partner App ${counter++}`,
    redirect_uris: [REDIRECT_URI],
    token_endpoint_auth_method: "client_secret_post",
    ...overrides,
  });
  await expect(response).toHaveStatus(201);
  return json<RegisteredClient>(response);
}

/** A client stored directly with a chosen secret (to test secrets our generator never makes, e.g. `+ % :`). */
export async function insertClient(options: {
  id: string;
  secret: string;
  method: "client_secret_basic" | "client_secret_post";
}) {
  await globalDb.insert(oauthClients).values({
    id: options.id,
    clientName: "Hand-made client",
    redirectUris: [REDIRECT_URI],
    tokenEndpointAuthMethod: options.method,
    secretHash: sha256Hex(options.secret),
    createdAt: new Date().toISOString(),
  });
}

const base64url = (bytes: Uint8Array) =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");

/** RFC 7636: a random verifier and its S256 challenge. */
export async function pkce() {
  const verifier = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))),
  );
  return { verifier, challenge };
}

export type AuthorizationParams = Record<string, string | undefined>;

/** The query of an authorization request; `undefined` members are left out. */
export function authorizeQuery(params: AuthorizationParams): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) query.append(name, value);
  return query.toString();
}

export async function validAuthorizationParams(client: RegisteredClient, overrides: AuthorizationParams = {}) {
  const { verifier, challenge } = await pkce();
  const params: AuthorizationParams = {
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0],
    scope: "api",
    state: `state-${counter++}`,
    code_challenge: challenge,
    code_challenge_method: "S256",
    ...overrides,
  };
  return { params, verifier };
}

/** A browser's cookie jar, just enough for these pages: name=value pairs from Set-Cookie, Max-Age=0 deletes. */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  take(response: Response) {
    for (const line of response.headers.getAll("Set-Cookie")) {
      const [pair = ""] = line.split(";");
      const index = pair.indexOf("=");
      const name = pair.slice(0, index);
      const value = pair.slice(index + 1);
      if (/;\s*Max-Age=0\b/i.test(line) || value === "") this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return response;
  }

  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }
}

/**
 * A request as the browser makes it: the jar's cookies, and its Set-Cookie taken back. A form it posts from one of
 * our pages carries our `Origin`, as browsers send on every POST (the Fetch standard); `headers` may replace it.
 */
export async function browse(
  jar: CookieJar,
  path: string,
  options: { method?: string; form?: Record<string, string | undefined>; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = options.form ? { Origin: BASE, ...options.headers } : { ...options.headers };
  if (jar.cookies.size > 0) headers.Cookie = jar.header();
  let body: string | undefined;
  if (options.form) {
    body = authorizeQuery(options.form);
    headers["Content-Type"] = "application/x-www-form-urlencoded";
  }
  return jar.take(await call(path, { method: options.method ?? (body ? "POST" : "GET"), body, headers }));
}

/** The CSRF token of a page's first form. */
export function csrfTokenOf(html: string): string {
  const match = /name="csrf_token" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error(`no CSRF token in the page:\n${html}`);
  return match[1];
}

/** Signs the owner in on the authorization page; answers the GET consent page that follows. */
export async function signIn(jar: CookieJar, query: string, owner: { email: string; password: string }) {
  const signInPage = await browse(jar, `/oauth/authorize?${query}`);
  await expect(signInPage).toHaveStatus(200);
  const csrf = csrfTokenOf(await signInPage.text());
  const posted = await browse(jar, `/oauth/authorize/sign-in?${query}`, {
    form: { csrf_token: csrf, email: owner.email, password: owner.password },
  });
  await expect(posted).toHaveStatus(303);
  return browse(jar, posted.headers.get("Location") ?? "");
}

/** Signs in and answers the consent page with `decision`; answers the 303's Location. */
export async function decide(
  query: string,
  owner: { email: string; password: string },
  decision: "approve" | "refuse",
  jar = new CookieJar(),
) {
  const consent = await signIn(jar, query, owner);
  await expect(consent).toHaveStatus(200);
  const posted = await browse(jar, `/oauth/authorize?${query}`, {
    form: { csrf_token: csrfTokenOf(await consent.text()), decision },
  });
  await expect(posted).toHaveStatus(303);
  return new URL(posted.headers.get("Location") ?? "");
}

/** Runs the authorization through the pages and answers the code (with its verifier). */
export async function authorizationCode(client: RegisteredClient, owner: OwnerBusiness["owner"], overrides = {}) {
  const { params, verifier } = await validAuthorizationParams(client, overrides);
  const location = await decide(authorizeQuery(params), owner, "approve");
  const code = location.searchParams.get("code");
  if (!code) throw new Error(`no code in ${location}`);
  return { code, verifier, redirectUri: params.redirect_uri ?? "", state: params.state };
}

/** A token request, form-encoded, with optional Basic credentials (each part form-urlencoded, RFC 6749 §2.3.1). */
export function postToken(
  form: Record<string, string | undefined>,
  options: {
    basic?: [string, string];
    authorization?: string;
    path?: string;
    headers?: Record<string, string>;
    bindings?: Partial<typeof env>;
  } = {},
) {
  const headers: Record<string, string> = { "Content-Type": "application/x-www-form-urlencoded", ...options.headers };
  if (options.basic) {
    const [id, secret] = options.basic.map(formUrlEncode);
    headers.Authorization = `Basic ${btoa(`${id}:${secret}`)}`;
  }
  if (options.authorization) headers.Authorization = options.authorization;
  return call(options.path ?? "/api/oauth/token", {
    method: "POST",
    body: authorizeQuery(form),
    headers,
    bindings: options.bindings,
  });
}

export const formUrlEncode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);

/** The client's credentials in the body, for a client_secret_post or none client. */
export const bodyCredentials = (client: RegisteredClient) => ({
  client_id: client.client_id,
  client_secret: client.client_secret,
});

export type Tokens = {
  access_token: string;
  token_type: string;
  expires_in: number;
  refresh_token: string;
  scope: string;
};

/** Registers a client_secret_post client, authorizes it for the owner's business and redeems the code. */
/** The owner of `ownerBusiness` connects `client` (authorization, approval, code exchange): the tokens. */
export async function connectClient(client: RegisteredClient, ownerBusiness: OwnerBusiness) {
  const { code, verifier, redirectUri } = await authorizationCode(client, ownerBusiness.owner);
  const response = await postToken({
    grant_type: "authorization_code",
    code,
    redirect_uri: redirectUri,
    code_verifier: verifier,
    ...bodyCredentials(client),
  });
  await expect(response).toHaveStatus(200);
  return json<Tokens>(response);
}

export async function connectApp(ownerBusiness: OwnerBusiness, clientOverrides: Record<string, unknown> = {}) {
  const client = await registerClient(clientOverrides);
  const tokens = await connectClient(client, ownerBusiness);
  const grant = await shardDb(ownerBusiness.shard)
    .select()
    .from(oauthGrants)
    .where(eq(oauthGrants.clientId, client.client_id))
    .get();
  if (!grant) throw new Error("no grant");
  return { client, tokens, grantId: grant.id };
}

/** The app's own access token (docs/guides/oauth.md, The app as itself): the client credentials grant, scope app. */
export async function appTokenOf(client: RegisteredClient) {
  const response = await postToken({ grant_type: "client_credentials", ...bodyCredentials(client) });
  await expect(response).toHaveStatus(200);
  return (await json<{ access_token: string }>(response)).access_token;
}

/** The connection (`oauth_grants` row) of `client` with the business of `shop`, in its shard. */
export async function grantOf(shop: OwnerBusiness, client: RegisteredClient) {
  const grant = await shardDb(shop.shard)
    .select()
    .from(oauthGrants)
    .where(and(eq(oauthGrants.clientId, client.client_id), eq(oauthGrants.businessId, shop.business.id)))
    .get();
  if (!grant) throw new Error("no connection of the app with the business");
  return grant;
}

export function refresh(client: RegisteredClient, refreshToken: string) {
  return postToken({ grant_type: "refresh_token", refresh_token: refreshToken, ...bodyCredentials(client) });
}

/** The token endpoint's budget as the route builds it for a request without CF-Connecting-IP (a test's). */
export const testBudget = (): TokenBudget => ({
  limiter: env.TOKEN_RATE_LIMIT,
  addressLimiter: env.TOKEN_ADDRESS_RATE_LIMIT,
  clientAddress: undefined,
});

/**
 * Drives the clock of refresh token reuse (docs/oauth.md, Refresh) through the stored rotation time: the refresh
 * token was rotated out `ms` milliseconds ago, as the HTTP route cannot take a clock.
 */
export async function setRotatedAgo(refreshToken: string, ms: number) {
  await db
    .update(oauthTokens)
    .set({ rotatedAt: new Date(Date.now() - ms).toISOString() })
    .where(eq(oauthTokens.tokenHash, sha256Hex(refreshToken)));
}

export async function expectOAuthError(response: Response, status: number, error: string, description?: RegExp) {
  const body = await json(response.clone());
  expect({ status: response.status, error: body.error }, JSON.stringify(body)).toEqual({ status, error });
  expect(Object.keys(body).sort()).toEqual(["error", "error_description"]);
  if (description) expect(body.error_description).toMatch(description);
  expect(response.headers.get("Cache-Control")).toBe("no-store");
}

/** `GET /api/v1/me` with an access token: whether the token is accepted. */
export const me = (token: string) => call("/api/v1/me", { key: token });
