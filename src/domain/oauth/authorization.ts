import { and, eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { oauthCodes, oauthGrants } from "../../db/schema";
import { readParameter, S256_CHALLENGE_PATTERN } from "../../lib/oauth-parameters";
import { matchRedirectUri } from "../../lib/redirect-uris";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { API_SCOPE } from "../../schemas/oauth";
import { type Business, planRefusal } from "../access/businesses";
import { findClient, type OAuthClient } from "./clients";

/** Spec: OAuth artefacts, "code: used once or 10 minutes pass → no longer valid". */
export const AUTHORIZATION_CODE_LIFETIME_MS = 10 * 60 * 1000;
export const AUTHORIZATION_CODE_PREFIX = "ac_";
/** `state` is echoed into a URL; a bound keeps that URL reasonable. */
export const MAX_STATE_LENGTH = 1024;

/** A valid authorization request (spec: Partner sign-in, step 2), as the consent page and the decision use it. */
export type AuthorizationRequest = {
  client: OAuthClient;
  /** As the client sent it: for a loopback URI the port may differ from the registered one (RFC 8252 §7.3). */
  redirectUri: string;
  state: string;
  codeChallenge: string;
  scope: typeof API_SCOPE;
};

export type AuthorizationRequestCheck =
  | { outcome: "valid"; request: AuthorizationRequest }
  /** RFC 6749 §4.1.2.1: with an unknown client or redirect URI the server "MUST NOT automatically redirect". */
  | { outcome: "error_page"; message: string }
  | { outcome: "error_redirect"; location: string };

type RedirectError = "invalid_request" | "unsupported_response_type" | "invalid_scope" | "access_denied";

/**
 * Appends the response parameters to the redirect URI, keeping its own query exactly as written (RFC 6749 §3.1.2:
 * "MUST retain the query component"). The URI has no fragment: registration refuses one. `iss` is in every
 * authorization response, success or error (RFC 9207 §2; DESIGN.md, Security notes: OAuth).
 */
export function authorizationResponseLocation(
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

const errorLocation = (
  redirectUri: string,
  error: RedirectError,
  description: string,
  state: string | undefined,
  issuer: string,
) => authorizationResponseLocation(redirectUri, { error, error_description: description, state }, issuer);

/**
 * Checks an authorization request (spec: Partner sign-in, step 2; RFC 6749 §4.1.1 with OAuth 2.1's PKCE rule).
 * The client and its redirect URI are checked first, and a problem with either is shown on a page: redirecting to
 * a URI that is not the client's would make this service an open redirector (RFC 6749 §4.1.2.1). Every other
 * problem is sent back to the client's redirect URI as `error` with `state` and `iss`.
 */
export async function checkAuthorizationRequest(
  db: Database,
  params: URLSearchParams,
  issuer: string,
): Promise<AuthorizationRequestCheck> {
  const page = (message: string): AuthorizationRequestCheck => ({ outcome: "error_page", message });
  const clientId = readParameter(params, "client_id");
  if (clientId.repeated) return page("The request names client_id more than once.");
  if (!clientId.value) return page("The request does not say which app it is for (client_id is missing).");
  const client = await findClient(db, clientId.value);
  if (!client) return page("No app is registered with this client_id.");

  const requestedUri = readParameter(params, "redirect_uri");
  if (requestedUri.repeated) return page("The request names redirect_uri more than once.");
  // The spec's request always carries redirect_uri; requiring it keeps the token request's check meaningful.
  if (!requestedUri.value) return page("The request has no redirect_uri.");
  if (!matchRedirectUri(client.redirectUris, requestedUri.value)) {
    return page("The redirect_uri is not one that this app registered.");
  }
  const redirectUri = requestedUri.value;

  const state = readParameter(params, "state");
  const stateValue = state.repeated ? undefined : state.value;
  // A repeated or overlong state is not echoed: it is what the error is about.
  const echoedState = stateValue !== undefined && stateValue.length <= MAX_STATE_LENGTH ? stateValue : undefined;
  const fail = (error: RedirectError, description: string): AuthorizationRequestCheck => ({
    outcome: "error_redirect",
    location: errorLocation(redirectUri, error, description, echoedState, issuer),
  });

  for (const name of ["response_type", "state", "scope", "code_challenge", "code_challenge_method"]) {
    if (readParameter(params, name).repeated) return fail("invalid_request", `The parameter ${name} is repeated.`);
  }
  // None is repeated from here on.
  const value = (name: string) => (readParameter(params, name) as { value: string | undefined }).value;
  const responseType = value("response_type");
  if (!responseType) return fail("invalid_request", "The parameter response_type is required.");
  if (responseType !== "code") return fail("unsupported_response_type", "Only response_type=code is supported.");
  // The spec lists state among the request's parameters and tells the client to check it: we require it.
  if (!stateValue) return fail("invalid_request", "The parameter state is required.");
  if (!echoedState) {
    return fail("invalid_request", `The parameter state must be at most ${MAX_STATE_LENGTH} characters long.`);
  }
  // PKCE with S256 is required (OAuth 2.1 §4.1.1; RFC 9700 §2.1.1): `plain` and a missing challenge are refused.
  const codeChallenge = value("code_challenge");
  const method = value("code_challenge_method");
  if (!codeChallenge) return fail("invalid_request", "The parameter code_challenge is required (PKCE with S256).");
  if (!method) return fail("invalid_request", "The parameter code_challenge_method=S256 is required.");
  if (method !== "S256") {
    return fail("invalid_request", "Only code_challenge_method=S256 is supported; plain is not accepted.");
  }
  if (!S256_CHALLENGE_PATTERN.test(codeChallenge)) {
    return fail("invalid_request", "The code_challenge must be the 43-character base64url SHA-256 of the verifier.");
  }
  // RFC 6749 §3.3: a missing scope means the default, which is the only scope there is.
  const scopes = (value("scope") ?? API_SCOPE).split(" ").filter(Boolean);
  if (scopes.length === 0 || scopes.some((scope) => scope !== API_SCOPE)) {
    return fail("invalid_scope", `The only scope is "${API_SCOPE}".`);
  }
  return {
    outcome: "valid",
    request: { client, redirectUri, state: echoedState, codeChallenge, scope: API_SCOPE },
  };
}

/** The parameters of a valid request, written again, for the forms of the sign-in and consent pages. */
export function authorizationQuery(request: AuthorizationRequest): string {
  return new URLSearchParams({
    response_type: "code",
    client_id: request.client.id,
    redirect_uri: request.redirectUri,
    scope: request.scope,
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: "S256",
  }).toString();
}

/**
 * Why the business cannot connect an app, in the owner's words, or undefined when it can (spec: "Only the owner can
 * approve, and only on the Pro or Business plan"; "When the plan lapses, calls return 403").
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

/** The owner refuses (spec: Partner sign-in, step 3): `error=access_denied` with `state` and `iss`. */
export function refuseAuthorization(request: AuthorizationRequest, issuer: string): string {
  return errorLocation(
    request.redirectUri,
    "access_denied",
    "The owner did not approve the app.",
    request.state,
    issuer,
  );
}

/**
 * The owner approves: the connection of this client and business is created, or reactivated if the owner had
 * disconnected it (one per client and business: issue 8), and a code is issued for it, single use, valid
 * 10 minutes, bound to the client (through the connection), the redirect URI as requested, and the PKCE challenge
 * (RFC 6749 §4.1.2, RFC 7636 §4.4). Both writes are one D1 batch. Only the code's SHA-256 is stored.
 */
export async function approveAuthorization(
  db: Database,
  request: AuthorizationRequest,
  business: Business,
  issuer: string,
  now: EpochMs = Date.now(),
): Promise<Decision> {
  const refusal = connectionRefusal(business);
  if (refusal) return { outcome: "refused_by_plan", message: refusal };
  const code = randomToken(AUTHORIZATION_CODE_PREFIX);
  const at = iso(now);
  const connection = and(eq(oauthGrants.clientId, request.client.id), eq(oauthGrants.businessId, business.id));
  await db.batch([
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
      }),
    db.insert(oauthCodes).values({
      codeHash: sha256Hex(code),
      grantId: sql`(select ${oauthGrants.id} from ${oauthGrants} where ${connection})`,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      expiresAt: iso(now + AUTHORIZATION_CODE_LIFETIME_MS),
      createdAt: at,
    }),
  ]);
  return {
    outcome: "redirect",
    location: authorizationResponseLocation(request.redirectUri, { code, state: request.state }, issuer),
  };
}
