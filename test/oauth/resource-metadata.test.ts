import { eq } from "drizzle-orm";
import * as oauth from "oauth4webapi";
import { describe, expect, it } from "vitest";
import { oauthTokens } from "../../src/db/schema";
import { API_KEY_PREFIX } from "../../src/domain/access/principals";
import { ACCESS_TOKEN_PREFIX } from "../../src/domain/oauth/token-format";
import { randomToken, sha256Hex } from "../../src/lib/secrets";
import { shardDb } from "../helpers/fixtures";
import { BASE, call, json } from "../helpers/http";
import { connectApp, createOwnerBusiness, ISSUER } from "../helpers/oauth";
import { fetchWorker, oauth4webapiOptions } from "../helpers/oauth4webapi-options";
import { ROUTES } from "../helpers/partner-routes";

// The partner API as an OAuth protected resource (docs/oauth.md, Finding the authorization server): its metadata
// (RFC 9728 §3) at the well-known path before /api/v1 and at the bare one, and the challenge of every 401 of /api/v1,
// which names that metadata (RFC 9728 §5.1).

const RESOURCE = `${ISSUER}/api/v1`;
const METADATA_URL = `${ISSUER}/.well-known/oauth-protected-resource/api/v1`;
const CHALLENGE = `Bearer realm="api", resource_metadata="${METADATA_URL}"`;

const DOCUMENT = {
  resource: RESOURCE,
  authorization_servers: [ISSUER],
  bearer_methods_supported: ["header"],
  scopes_supported: ["api", "app"],
  resource_name: "Secretary partner API",
  resource_documentation: `${ISSUER}/docs`,
};

describe("the protected resource metadata (RFC 9728 §3)", () => {
  it.each(["/.well-known/oauth-protected-resource/api/v1", "/.well-known/oauth-protected-resource"])(
    "%s: the API's document, public, cached like the authorization server's",
    async (path) => {
      const response = await call(path);
      await expect(response).toHaveStatus(200);
      expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
      expect(response.headers.get("Cache-Control")).toBe("public, max-age=3600");
      const server = await call("/.well-known/oauth-authorization-server");
      expect(response.headers.get("Cache-Control")).toBe(server.headers.get("Cache-Control"));
      expect(await json(response)).toEqual(DOCUMENT);
    },
  );

  it("names the resource exactly, without a trailing slash, whatever BASE_URL ends with", async () => {
    const bindings = { BASE_URL: "https://partners.example/", SERVICE_NAME: "Agenda" };
    const body = await json(await call("/.well-known/oauth-protected-resource/api/v1", { bindings }));
    expect(body).toMatchObject({
      resource: "https://partners.example/api/v1",
      authorization_servers: ["https://partners.example"],
      resource_name: "Agenda partner API",
      resource_documentation: "https://partners.example/docs",
    });
  });

  it("serves no document for another resource path", async () => {
    await expect(await call("/.well-known/oauth-protected-resource/api/v2")).toHaveStatus(404);
  });
});

const options = oauth4webapiOptions;

describe("a client finds the authorization server from a 401 (RFC 9728 §5, with oauth4webapi)", () => {
  it("follows resource_metadata to the authorization server, whose metadata names the resource back", async () => {
    const refused = await oauth
      .protectedResourceRequest(
        randomToken(ACCESS_TOKEN_PREFIX),
        "GET",
        new URL(`${BASE}/api/v1/me`),
        undefined,
        undefined,
        options,
      )
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError);
    const [challenge] = (refused as oauth.WWWAuthenticateChallengeError).cause;
    expect(challenge?.parameters).toEqual({ realm: "api", resource_metadata: METADATA_URL, error: "invalid_token" });

    const resource = await oauth.processResourceDiscoveryResponse(
      new URL(RESOURCE),
      await fetchWorker(challenge?.parameters.resource_metadata ?? ""),
    );
    // The same document the library finds by itself from the resource identifier.
    expect(
      await oauth.processResourceDiscoveryResponse(
        new URL(RESOURCE),
        await oauth.resourceDiscoveryRequest(new URL(RESOURCE), options),
      ),
    ).toEqual(resource);

    const issuer = new URL(resource.authorization_servers?.[0] ?? "");
    const as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { ...options, algorithm: "oauth2" }),
    );
    expect(as.protected_resources).toEqual([RESOURCE]);

    // The token request names the resource as the guide says (`additionalParameters`): the new pair is bound to it.
    const app = await connectApp(await createOwnerBusiness({ shard: "eu1" }));
    const client = { client_id: app.client.client_id };
    const clientAuth = oauth.ClientSecretPost(app.client.client_secret ?? "");
    const tokens = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, clientAuth, app.tokens.refresh_token, {
        ...options,
        additionalParameters: { resource: RESOURCE },
      }),
    );
    const bound = await shardDb("eu1")
      .select({ resource: oauthTokens.resource })
      .from(oauthTokens)
      .where(eq(oauthTokens.tokenHash, sha256Hex(tokens.access_token)))
      .get();
    expect(bound?.resource).toBe(RESOURCE);
    const answer = await oauth.protectedResourceRequest(
      tokens.access_token,
      "GET",
      new URL(`${RESOURCE}/me`),
      undefined,
      undefined,
      options,
    );
    await expect(answer).toHaveStatus(200);
  });
});

describe("every 401 of /api/v1 names the metadata (RFC 9728 §5.1)", () => {
  it.each(ROUTES)("%s %s", async (method, path, _ok, body) => {
    // The credential is judged before the path's record is looked for: any id does.
    const url = `/api/v1${path.replace(/\{\w+\}/g, "1")}`;
    const send = (key?: string, headers: Record<string, string> = {}) => call(url, { method, body, key, headers });
    const refusals = [
      [await send(), CHALLENGE, "authentication_required"],
      [await send(undefined, { Authorization: "Bearer sk_live_a,b" }), CHALLENGE, "invalid_credential"],
      [await send(randomToken(API_KEY_PREFIX)), CHALLENGE, "invalid_credential"],
      [await send(randomToken(ACCESS_TOKEN_PREFIX)), `${CHALLENGE}, error="invalid_token"`, "invalid_credential"],
    ] as const;
    for (const [response, challenge, code] of refusals) {
      await expect(response).toHaveStatus(401);
      expect(response.headers.get("WWW-Authenticate")).toBe(challenge);
      expect((await json(response)).code).toBe(code);
    }
  });

  it("the OAuth endpoints keep their own challenge: invalid_client is Basic", async () => {
    const response = await call("/api/oauth/token", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded", Authorization: `Basic ${btoa("cl_x:wrong")}` },
      body: "grant_type=refresh_token&refresh_token=x",
    });
    await expect(response).toHaveStatus(401);
    expect(response.headers.get("WWW-Authenticate")).toBe('Basic realm="oauth", charset="UTF-8"');
  });

  it("the internal API's challenge names no metadata: it is no OAuth resource", async () => {
    const response = await call("/internal/v1/businesses/biz_x/events", { method: "POST", body: {} });
    await expect(response).toHaveStatus(401);
    expect(response.headers.get("WWW-Authenticate")).toBe('Bearer realm="api"');
  });
});
