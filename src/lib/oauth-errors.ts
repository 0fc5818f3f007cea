/**
 * The error codes of the OAuth endpoints: RFC 6749 §5.2 (token and revocation endpoints, RFC 7009 §2.2.1),
 * RFC 7591 §3.2.2 (registration) and RFC 6750 §3.1's `invalid_token` (the client configuration endpoint, RFC 7592 §2);
 * RFC 8707 §2's `invalid_target`, a `resource` that is not this API.
 */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "invalid_token"
  | "invalid_target";

/**
 * An OAuth error, answered as RFC 6749 §5.2's `{ error, error_description }` (docs/decisions.md, Errors). Domain
 * functions of the OAuth endpoints throw it; the router of `/api/oauth` turns it into the JSON body, with
 * `Cache-Control: no-store`.
 * `error_description` is a sentence for the developer; it never carries a secret.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly status: 400 | 401 = 400,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = "OAuthError";
  }
}

export const invalidRequest = (description: string) => new OAuthError("invalid_request", description);

export const invalidGrant = (description: string) => new OAuthError("invalid_grant", description);

export const invalidScope = (description: string) => new OAuthError("invalid_scope", description);

/**
 * RFC 6749 §5.2: invalid_client answers 401, and "MUST include the WWW-Authenticate response header field matching
 * the authentication scheme used by the client" when it used the Authorization header. We send the Basic challenge
 * on every invalid_client, since RFC 9110 §15.5.2 asks every 401 to carry one and Basic is the only header scheme
 * a client may use here.
 */
export const invalidClient = (description: string) =>
  new OAuthError("invalid_client", description, 401, { "WWW-Authenticate": 'Basic realm="oauth", charset="UTF-8"' });
