import { and, eq, isNull, sql } from "drizzle-orm";
import { oauthClients, oauthCodes, oauthGrants } from "../../db/schema";
import { shardSegment } from "../../db/shards";
import type { Dependencies, GlobalDependencies } from "../../dependencies";
import { isClientIdUrl } from "../../lib/client-id-urls";
import { readParameter, S256_CHALLENGE_PATTERN } from "../../lib/oauth-parameters";
import { matchRedirectUri } from "../../lib/redirect-uris";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { API_SCOPE } from "../../schemas/oauth";
import { type Business, planRefusal } from "../access/businesses";
import { appConnected } from "../webhooks/app-connection-events";
import { refreshCopy } from "./client-copies";
import { type DocumentReading, documentClient } from "./client-metadata-documents";
import { findClient, type OAuthClient } from "./clients";
import { oauthIssuer } from "./discovery";
import { requestedResource } from "./protected-resource";
import { AUTHORIZATION_CODE_PREFIX } from "./token-format";

/** A code is single use and valid 10 minutes (docs/guides/oauth.md, 2. Send the owner to the authorization page). */
export const AUTHORIZATION_CODE_LIFETIME_MS = 10 * 60 * 1000;
/** `state` is echoed into a URL; a bound keeps that URL reasonable. */
export const MAX_STATE_LENGTH = 1024;

/** A valid authorization request (docs/guides/oauth.md, 2. Send the owner to the authorization page). */
export type AuthorizationRequest = {
  client: OAuthClient;
  /** As the client sent it: for a loopback URI the port may differ from the registered one (RFC 8252 §7.3). */
  redirectUri: string;
  state: string;
  codeChallenge: string;
  scope: typeof API_SCOPE;
  /** RFC 8707: this API's identifier when the client named it; the code and its tokens are bound to it. */
  resource: string | undefined;
};

/**
 * An invalid request is only ever shown on a page (`message`), never sent to the client's redirect URI: see
 * `checkAuthorizationRequest`. An otherwise valid request for another resource is shown too, with the way back to the
 * app that the owner may follow (`location`, `error=invalid_target`).
 */
export type AuthorizationRequestCheck =
  | { outcome: "valid"; request: AuthorizationRequest }
  | { outcome: "invalid"; message: string }
  | { outcome: "invalid_target"; message: string; location: string };

/**
 * Appends the response parameters to the redirect URI, keeping its own query exactly as written (RFC 6749 §3.1.2:
 * "MUST retain the query component"). The URI has no fragment: registration refuses one. `iss` is in every
 * authorization response (RFC 9207 §2; docs/architecture.md, OAuth).
 */
function authorizationResponseLocation(
  redirectUri: string,
  parameters: Record<string, string | undefined>,
  issuer: string,
): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) query.append(name, value);
  query.append("iss", issuer);
  const separator = !redirectUri.includes("?") ? "?" : /[?&]$/.test(redirectUri) ? "" : "&";
  return `${redirectUri}${separator}${query.toString()}`;
}

/**
 * Checks an authorization request (RFC 6749 §4.1.1 with OAuth 2.1's PKCE rule; docs/oauth.md, Decisions). Every
 * problem is answered on a page, never by a redirect: clients register themselves, so a registered URI is not trusted
 * until the owner acts (RFC 9700 §4.11.2, the open redirector). Only the owner's own action sends the browser to the
 * client: the decision on the consent page, or the link back from a request for another resource (docs/architecture.md,
 * OAuth).
 */
export async function checkAuthorizationRequest(
  deps: GlobalDependencies,
  params: URLSearchParams,
  reading: DocumentReading,
): Promise<AuthorizationRequestCheck> {
  const invalid = (message: string): AuthorizationRequestCheck => ({ outcome: "invalid", message });
  const clientId = readParameter(params, "client_id");
  if (clientId.repeated) return invalid("The request names client_id more than once.");
  if (!clientId.value) return invalid("The request does not say which app it is for (client_id is missing).");
  // A URL is the address of the app's metadata document, which is read here (docs/oauth.md, Client ID metadata
  // documents); any other id is a registration's.
  const client = isClientIdUrl(clientId.value)
    ? await documentClient(deps, reading, clientId.value)
    : await findClient(deps, clientId.value);
  if (typeof client === "string") return invalid(client);
  if (!client) return invalid("No app is registered with this client_id.");

  const requestedUri = readParameter(params, "redirect_uri");
  if (requestedUri.repeated) return invalid("The request names redirect_uri more than once.");
  // Required (docs/guides/oauth.md, 2. Send the owner to the authorization page), so the token request's check means
  // something.
  if (!requestedUri.value) return invalid("The request has no redirect_uri.");
  if (!matchRedirectUri(client.redirectUris, requestedUri.value)) {
    return invalid(
      client.metadataFetchedAt
        ? "The redirect_uri is not one of the redirect_uris of the app's metadata document."
        : "The redirect_uri is not one that this app registered.",
    );
  }

  for (const name of ["response_type", "state", "scope", "code_challenge", "code_challenge_method"]) {
    if (readParameter(params, name).repeated) return invalid(`The parameter ${name} is repeated.`);
  }
  // None is repeated from here on.
  const value = (name: string) => (readParameter(params, name) as { value: string | undefined }).value;
  const responseType = value("response_type");
  if (!responseType) return invalid("The parameter response_type is required.");
  if (responseType !== "code") return invalid("Only response_type=code is supported.");
  // Required, for the client to check on return (docs/oauth.md, Decisions).
  const state = value("state");
  if (!state) return invalid("The parameter state is required.");
  if (state.length > MAX_STATE_LENGTH) {
    return invalid(`The parameter state must be at most ${MAX_STATE_LENGTH} characters long.`);
  }
  // PKCE with S256 is required (OAuth 2.1 §4.1.1; RFC 9700 §2.1.1): `plain` and a missing challenge are refused.
  const codeChallenge = value("code_challenge");
  const method = value("code_challenge_method");
  if (!codeChallenge) return invalid("The parameter code_challenge is required (PKCE with S256).");
  if (!method) return invalid("The parameter code_challenge_method=S256 is required.");
  if (method !== "S256") return invalid("Only code_challenge_method=S256 is supported; plain is not accepted.");
  if (!S256_CHALLENGE_PATTERN.test(codeChallenge)) {
    return invalid("The code_challenge must be the 43-character base64url SHA-256 of the verifier.");
  }
  // RFC 6749 §3.3: a missing scope means the default, which is the only scope there is.
  const scopes = (value("scope") ?? API_SCOPE).split(" ").filter(Boolean);
  if (scopes.length === 0 || scopes.some((scope) => scope !== API_SCOPE)) {
    return invalid(`The only scope is "${API_SCOPE}".`);
  }
  // RFC 8707 §2: a resource other than this API is `invalid_target`, which reaches the app only through the owner's
  // click on the page's link, as any error of an unverified redirect URI (RFC 9700 §4.11.2).
  const resource = requestedResource(params, deps.baseUrl);
  if (typeof resource === "object") {
    const error = { error: "invalid_target", error_description: resource.refusal, state };
    const location = authorizationResponseLocation(requestedUri.value, error, oauthIssuer(deps.baseUrl));
    return { outcome: "invalid_target", message: resource.refusal, location };
  }
  return {
    outcome: "valid",
    request: { client, redirectUri: requestedUri.value, state, codeChallenge, scope: API_SCOPE, resource },
  };
}

/** The parameters of a valid request, written again, for the forms of the sign-in and consent pages. */
export function authorizationQuery(request: AuthorizationRequest): string {
  const query = new URLSearchParams({
    response_type: "code",
    client_id: request.client.id,
    redirect_uri: request.redirectUri,
    scope: request.scope,
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: "S256",
  });
  if (request.resource) query.set("resource", request.resource);
  return query.toString();
}

/**
 * Why the business cannot connect an app, in the owner's words, or undefined when it can: only its owner approves, on
 * an active Pro or Business plan (docs/guides/oauth.md, 2. Send the owner to the authorization page).
 */
export function connectionRefusal(business: Business): string | undefined {
  const refusal = planRefusal(business);
  if (refusal === "not_included") {
    return "Connecting apps needs the Pro or Business plan. Your business is on the Free plan.";
  }
  if (refusal === "lapsed") return "Your plan has lapsed. Apps can be connected again once the plan is active.";
  return undefined;
}

export type Decision = { outcome: "redirect"; location: string } | { outcome: "refused_by_plan"; message: string };

/**
 * The owner refuses: `error=access_denied` with `state` and `iss` (docs/guides/oauth.md, 2. Send the owner to the
 * authorization page).
 */
export function refuseAuthorization(request: AuthorizationRequest, issuer: string): string {
  return authorizationResponseLocation(
    request.redirectUri,
    { error: "access_denied", error_description: "The owner did not approve the app.", state: request.state },
    issuer,
  );
}

/**
 * The owner approves: the connection is created, or reactivated (one per client and business), with a code bound to
 * it, the redirect URI and the PKCE challenge (docs/oauth.md, Decisions), in one batch in the business's shard with a
 * copy of the client's row. The first approval is marked in the global database first, sparing the client from the
 * cleanup: a batch failing after it keeps a client for nothing, never removes a connected one.
 */
export async function approveAuthorization(
  deps: Dependencies,
  request: AuthorizationRequest,
  business: Business,
  issuer: string,
  now: EpochMs = deps.clock(),
): Promise<Decision> {
  const { db } = deps;
  const refusal = connectionRefusal(business);
  if (refusal) return { outcome: "refused_by_plan", message: refusal };
  const code = randomToken(AUTHORIZATION_CODE_PREFIX + shardSegment(deps.shard));
  const at = iso(now);
  const connection = and(eq(oauthGrants.clientId, request.client.id), eq(oauthGrants.businessId, business.id));
  await deps.global
    .update(oauthClients)
    .set({ firstApprovedAt: at })
    .where(and(eq(oauthClients.id, request.client.id), isNull(oauthClients.firstApprovedAt)));
  const [, [grant]] = await db.batch([
    db
      .insert(oauthClients)
      .values({ ...request.client, firstApprovedAt: request.client.firstApprovedAt ?? at })
      .onConflictDoNothing({ target: oauthClients.id }),
    db
      .insert(oauthGrants)
      .values({ clientId: request.client.id, businessId: business.id, scope: request.scope, createdAt: at })
      .onConflictDoUpdate({
        target: [oauthGrants.clientId, oauthGrants.businessId],
        // A reconnection starts a new connection period: `created_at` then says when it began.
        set: {
          createdAt: sql`case when ${oauthGrants.revokedAt} is null then ${oauthGrants.createdAt} else excluded.created_at end`,
          revokedAt: null,
          scope: request.scope,
        },
      })
      .returning({ id: oauthGrants.id, connectedAt: oauthGrants.createdAt }),
    db.insert(oauthCodes).values({
      codeHash: sha256Hex(code),
      grantId: sql`(select ${oauthGrants.id} from ${oauthGrants} where ${connection})`,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      expiresAt: iso(now + AUTHORIZATION_CODE_LIFETIME_MS),
      createdAt: at,
    }),
  ]);
  // The client may have changed since it was read (docs/oauth.md, Managing your app): its copy follows.
  await refreshCopy(deps, request.client.id, now);
  if (grant)
    await appConnected(deps, business, {
      clientId: request.client.id,
      grantId: grant.id,
      connectedAt: grant.connectedAt,
    });
  return {
    outcome: "redirect",
    location: authorizationResponseLocation(request.redirectUri, { code, state: request.state }, issuer),
  };
}
