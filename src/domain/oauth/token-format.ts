/**
 * Access and refresh tokens: a prefix + 32 random bytes in base64url. The prefixes differ from the API key's
 * (`sk_live_`) and from each other, so that a credential is recognised by its shape before any query, API keys
 * and tokens never share a lookup, and a refresh token is never taken for an access token.
 */
export const ACCESS_TOKEN_PREFIX = "at_live_";
export const REFRESH_TOKEN_PREFIX = "rt_live_";
export const ACCESS_TOKEN_PATTERN = /^at_live_[A-Za-z0-9_-]{43}$/;
export const TOKEN_PATTERN = /^(?:at|rt)_live_[A-Za-z0-9_-]{43}$/;
