import type { Context } from "hono";
import { ApiError } from "../lib/api-error";
import { secretsEqual } from "../lib/secret-comparison";

/** A secret's value, or during its rotation the one before it. */
export type TokenPresented = "current" | "previous";

/**
 * Which value of a secret the request's `Authorization: Bearer <token>` presents: the current one, or, only while the
 * secret is rotated, the one before it, so that callers move to the new one without a refused request
 * (docs/operations.md, Rotating RUNTIME_TOKEN). Both are always compared, in constant time, so the time taken does not
 * tell which matched; an unset current value refuses everything. No match is a 401 saying `refusal`.
 */
export function tokenPresented(
  c: Context,
  secret: { current: string | undefined; previous: string | undefined },
  refusal: string,
): TokenPresented {
  const presented = /^Bearer +(\S+)$/i.exec(c.req.header("Authorization")?.trim() ?? "")?.[1];
  const matches = (secret.current ? [secret.current, secret.previous] : []).map(
    (token) => !!token && !!presented && secretsEqual(presented, token),
  );
  const matched = matches.indexOf(true);
  if (matched < 0) {
    // These routes are no OAuth resource: their challenge names no metadata, the partner API's (RFC 9728 §5.1).
    throw new ApiError(presented === undefined ? "authentication_required" : "invalid_credential", refusal, {
      headers: [["WWW-Authenticate", 'Bearer realm="api"']],
    });
  }
  return matched === 0 ? "current" : "previous";
}
