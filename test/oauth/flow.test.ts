import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import * as oauth from "oauth4webapi";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { BASE } from "../helpers/http";
import { browse, CookieJar, createOwnerBusiness, csrfTokenOf, insertClient, REDIRECT_URI } from "../helpers/oauth";
import { oauth4webapiOptions } from "../helpers/oauth4webapi-options";

/**
 * The whole flow with an independent, maintained client library (oauth4webapi, panva), in workerd: every request
 * it makes goes to the Worker's real fetch handler through its `customFetch` hook. The owner's part is driven by
 * real requests to the authorization pages: the sign-in form with its CSRF token and cookie, then Approve.
 */
const options = oauth4webapiOptions;

/** Discovery (RFC 8414) as the library does it: it checks that the issuer is the address it asked. */
const discovered = async (issuer: URL) =>
  oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: "oauth2" }));

/** Registration (RFC 7591) through the library. */
const registeredClient = async (
  as: oauth.AuthorizationServer,
  metadata: Partial<oauth.OmitSymbolProperties<oauth.Client>>,
) =>
  oauth.processDynamicClientRegistrationResponse(await oauth.dynamicClientRegistrationRequest(as, metadata, options));

async function authorizationRequest(as: oauth.AuthorizationServer, clientId: string, verifier: string, state: string) {
  const url = new URL(as.authorization_endpoint ?? "");
  url.search = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    scope: "api",
    state,
    code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  }).toString();
  return url;
}

async function ownerApproves(authorizationUrl: URL, owner: { email: string; password: string }) {
  const jar = new CookieJar();
  const path = `${authorizationUrl.pathname}${authorizationUrl.search}`;
  const signInPage = await browse(jar, path);
  await expect(signInPage).toHaveStatus(200);
  const signedIn = await browse(jar, `/oauth/authorize/sign-in${authorizationUrl.search}`, {
    form: { csrf_token: csrfTokenOf(await signInPage.text()), email: owner.email, password: owner.password },
  });
  await expect(signedIn).toHaveStatus(303);
  const consent = await browse(jar, signedIn.headers.get("Location") ?? "");
  await expect(consent).toHaveStatus(200);
  const approved = await browse(jar, path, {
    form: { csrf_token: csrfTokenOf(await consent.text()), decision: "approve" },
  });
  await expect(approved).toHaveStatus(303);
  return new URL(approved.headers.get("Location") ?? "");
}

describe("end to end with oauth4webapi: discovery, registration, PKCE, code, /me, refresh, revocation", () => {
  it.each([
    ["client_secret_basic", (secret: string) => oauth.ClientSecretBasic(secret)],
    ["client_secret_post", (secret: string) => oauth.ClientSecretPost(secret)],
    ["none", () => oauth.None()],
  ] as const)("works for a %s client", async (method, clientAuthFor) => {
    const shop = await createOwnerBusiness({ name: "Bella Hair Studio" });

    const issuer = new URL(BASE);
    const as = await discovered(issuer);
    expect(as.issuer).toBe(BASE);

    const registered = await registeredClient(as, {
      client_name: "Partner CRM",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: method,
    });
    const client: oauth.Client = { client_id: registered.client_id, token_endpoint_auth_method: method };
    const clientAuth = clientAuthFor(String(registered.client_secret ?? ""));

    // Authorization request with PKCE S256 and state.
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorizationUrl = await authorizationRequest(as, client.client_id, verifier, state);
    const callback = await ownerApproves(authorizationUrl, shop.owner);

    // The library checks state and iss (RFC 9207) of the redirect.
    const params = oauth.validateAuthResponse(as, client, callback, state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, clientAuth, params, REDIRECT_URI, verifier, options),
    );
    expect(tokens).toMatchObject({ token_type: "bearer", expires_in: 3600, scope: "api" });

    const me = async (accessToken: string) =>
      oauth.protectedResourceRequest(accessToken, "GET", new URL(`${BASE}/api/v1/me`), undefined, undefined, options);
    const meResponse = await me(tokens.access_token);
    await expect(meResponse).toHaveStatus(200);
    expect(await meResponse.json()).toMatchObject({ id: shop.business.id, name: "Bella Hair Studio" });

    // Refresh (rotation): a new pair; the old refresh token is refused afterwards.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token ?? "", options),
    );
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    await expect(await me(refreshed.access_token)).toHaveStatus(200);
    await expect(
      oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, tokens.refresh_token ?? "", options),
      ),
    ).rejects.toMatchObject({ error: "invalid_grant", status: 400 });
    // Refused within 5 seconds of its use, the old token revoked nothing: the new pair still works.
    await expect(await me(refreshed.access_token)).toHaveStatus(200);

    // Revocation (RFC 7009): both tokens stop at once.
    await oauth.processRevocationResponse(
      await oauth.revocationRequest(as, client, clientAuth, refreshed.refresh_token ?? "", options),
    );
    // The 401 carries RFC 6750's challenge, which the library reads: invalid_token.
    const after = await me(refreshed.access_token).catch((error: unknown) => error);
    expect(after).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    expect((after as oauth.WWWAuthenticateChallengeError).cause).toEqual([
      {
        scheme: "bearer",
        parameters: {
          realm: "api",
          resource_metadata: `${BASE}/.well-known/oauth-protected-resource/api/v1`,
          error: "invalid_token",
        },
      },
    ]);
    await expect(
      oauth.processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, clientAuth, refreshed.refresh_token ?? "", options),
      ),
    ).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("reports a refused consent as access_denied, with state and iss checked", async () => {
    const shop = await createOwnerBusiness();
    const issuer = new URL(BASE);
    const as = await discovered(issuer);
    const registered = await registeredClient(as, { client_name: "Refused", redirect_uris: [REDIRECT_URI] });
    const client: oauth.Client = { client_id: registered.client_id };
    const state = oauth.generateRandomState();
    const url = await authorizationRequest(as, client.client_id, oauth.generateRandomCodeVerifier(), state);
    const jar = new CookieJar();
    const signInPage = await browse(jar, `${url.pathname}${url.search}`);
    const signedIn = await browse(jar, `/oauth/authorize/sign-in${url.search}`, {
      form: {
        csrf_token: csrfTokenOf(await signInPage.text()),
        email: shop.owner.email,
        password: shop.owner.password,
      },
    });
    const consent = await browse(jar, signedIn.headers.get("Location") ?? "");
    const refused = await browse(jar, `${url.pathname}${url.search}`, {
      form: { csrf_token: csrfTokenOf(await consent.text()), decision: "refuse" },
    });
    expect(() => oauth.validateAuthResponse(as, client, new URL(refused.headers.get("Location") ?? ""), state)).toThrow(
      expect.objectContaining({ error: "access_denied" }),
    );
  });

  it("reads the token endpoint's 429 as an OAuth error, temporarily_unavailable, with its Retry-After", async () => {
    // A Rate Limiting binding whose budget is spent (test/oauth/token-budget.test.ts spends the real one).
    const spent: RateLimit = { limit: async () => ({ success: false }) };
    const spentFetch: typeof fetch = async (input, init) => {
      const ctx = createExecutionContext();
      const response = await worker.fetch(new Request(input, init), { ...env, TOKEN_RATE_LIMIT: spent }, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    };
    const issuer = new URL(BASE);
    const as = await discovered(issuer);
    const registered = await registeredClient(as, {
      client_name: "Busy",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "client_secret_basic",
    });
    const client: oauth.Client = { client_id: registered.client_id };
    const refused = await oauth
      .processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(
          as,
          client,
          oauth.ClientSecretBasic(String(registered.client_secret)),
          `rt_live_${"x".repeat(43)}`,
          { ...options, [oauth.customFetch]: spentFetch },
        ),
      )
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError);
    expect(refused).toMatchObject({ status: 429, error: "temporarily_unavailable" });
    expect((refused as oauth.ResponseBodyError).response.headers.get("Retry-After")).toBe("60");
  });

  it("interoperates on Basic credentials that need form-urlencoding (a secret with +, % and :)", async () => {
    const shop = await createOwnerBusiness();
    const secret = "p+ss%word:with:colons";
    await insertClient({ id: "cl_interop_basic", secret, method: "client_secret_basic" });
    const issuer = new URL(BASE);
    const as = await discovered(issuer);
    const client: oauth.Client = { client_id: "cl_interop_basic" };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = await authorizationRequest(as, client.client_id, verifier, state);
    const params = oauth.validateAuthResponse(as, client, await ownerApproves(url, shop.owner), state);
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        oauth.ClientSecretBasic(secret),
        params,
        REDIRECT_URI,
        verifier,
        options,
      ),
    );
    expect(tokens.access_token).toMatch(/^at_live_/);
  });
});
