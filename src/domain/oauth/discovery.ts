import { TOKEN_ENDPOINT_AUTH_METHODS } from "../../db/schema";
import { API_SCOPE, APP_GRANT_TYPE, APP_SCOPE, GRANT_TYPES } from "../../schemas/oauth";

/**
 * The issuer identifier (RFC 8414 §2; RFC 9207 `iss`): the service's base address, without a trailing slash, so
 * that it compares equal to what clients derive from the discovery URL.
 */
export const oauthIssuer = (baseUrl: string) => baseUrl.replace(/\/+$/, "");

/**
 * The partner API's resource identifier (RFC 8707 §2; RFC 9728 §1.2): what a client names as `resource`, and what a
 * token may be bound to (docs/oauth.md, Finding the authorization server).
 */
export const apiResource = (baseUrl: string) => `${oauthIssuer(baseUrl)}/api/v1`;

/** The four endpoints (docs/guides/oauth.md, Endpoints), absolute, as RFC 8414 §2 asks. */
export function oauthEndpoints(baseUrl: string) {
  const issuer = oauthIssuer(baseUrl);
  return {
    authorization_endpoint: `${issuer}/oauth/authorize`,
    token_endpoint: `${issuer}/api/oauth/token`,
    registration_endpoint: `${issuer}/api/oauth/register`,
    revocation_endpoint: `${issuer}/api/oauth/revoke`,
  };
}

/**
 * RFC 8414 §2 metadata, exactly the document of docs/oauth.md, Endpoints: what the service supports, including
 * `revocation_endpoint_auth_methods_supported`: without it RFC 8414 tells clients that revocation accepts only
 * client_secret_basic, which would send public clients nowhere. `protected_resources` is RFC 9728 §4's, registered
 * for this document: the one resource its tokens are for, whose own metadata names this issuer back.
 */
export function discoveryDocument(baseUrl: string) {
  return {
    issuer: oauthIssuer(baseUrl),
    ...oauthEndpoints(baseUrl),
    response_types_supported: ["code"],
    grant_types_supported: [...GRANT_TYPES, APP_GRANT_TYPE],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    revocation_endpoint_auth_methods_supported: [...TOKEN_ENDPOINT_AUTH_METHODS],
    scopes_supported: [API_SCOPE, APP_SCOPE],
    authorization_response_iss_parameter_supported: true,
    // The MCP authorization specification reads it: an https client_id is a metadata document's URL (docs/oauth.md,
    // Client ID metadata documents).
    client_id_metadata_document_supported: true,
    protected_resources: [apiResource(baseUrl)],
  };
}
