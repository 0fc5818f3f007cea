import type { BearerChallenge } from "../../lib/api-error";
import { OAuthError } from "../../lib/oauth-errors";
import { readParameter } from "../../lib/oauth-parameters";
import { API_SCOPE, APP_SCOPE } from "../../schemas/oauth";
import { apiResource, oauthIssuer } from "./discovery";

/*
 * The partner API as an OAuth protected resource (docs/oauth.md, Finding the authorization server): its metadata
 * (RFC 9728), the challenge of its 401s that points there, and the `resource` a client binds its tokens to (RFC 8707).
 */

/** RFC 9728 §3.1: the well-known path, inserted before the resource's own path. */
export const RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource";

/** RFC 9728 §2: the API's metadata, public; its `resource` is exactly the identifier a token is bound to. */
export function protectedResourceDocument(baseUrl: string, serviceName: string) {
  const issuer = oauthIssuer(baseUrl);
  return {
    resource: apiResource(baseUrl),
    authorization_servers: [issuer],
    bearer_methods_supported: ["header"],
    scopes_supported: [API_SCOPE, APP_SCOPE],
    resource_name: `${serviceName} partner API`,
    resource_documentation: `${issuer}/docs`,
  };
}

/**
 * The challenge of every 401 of /api/v1 (RFC 6750 §3): it names the API's metadata (RFC 9728 §5.1), so a client
 * without a credential finds the authorization server, and says `invalid_token` of a refused token (RFC 6750 §3.1).
 */
export const bearerChallenge = (baseUrl: string, challenge: BearerChallenge) =>
  `Bearer realm="api", resource_metadata="${oauthIssuer(baseUrl)}${RESOURCE_METADATA_PATH}/api/v1"${
    challenge === "invalid_token" ? ', error="invalid_token"' : ""
  }`;

/**
 * RFC 8707 §2: the `resource` a request names, or undefined when it names none. It must be an absolute URI without a
 * fragment, and this API's identifier (a trailing slash aside), the only resource there is: anything else, a second
 * value included, is refused (`invalid_target`) with the sentence answered.
 */
export function requestedResource(params: URLSearchParams, baseUrl: string): string | undefined | { refusal: string } {
  const resource = apiResource(baseUrl);
  const refusal = { refusal: `The only resource is this API: name ${resource} once, or no resource.` };
  const parameter = readParameter(params, "resource");
  if (parameter.repeated) return refusal;
  if (parameter.value === undefined) return undefined;
  // Equal to the identifier, it is absolute and has no fragment: a relative reference or a fragment is refused too.
  return parameter.value.replace(/\/$/, "") === resource ? resource : refusal;
}

/**
 * RFC 8707 §2.2: the resource a token request binds its tokens to. The one it names must be the one the code or
 * refresh token was granted for, when that was bound (a refresh narrows only to the same resource); without one, the
 * tokens keep the grant's.
 */
export function tokenResource(form: URLSearchParams, baseUrl: string, granted: string | null): string | null {
  const requested = requestedResource(form, baseUrl);
  if (typeof requested === "object") throw new OAuthError("invalid_target", requested.refusal);
  if (requested === undefined) return granted;
  if (granted !== null && requested !== granted) {
    throw new OAuthError("invalid_target", `The resource differs from the one authorized, ${granted}.`);
  }
  return requested;
}
