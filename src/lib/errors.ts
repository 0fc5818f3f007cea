import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The one exception class of the service. Domain functions throw it; `app.onError` turns it into the spec's status
 * and `{ "error": <sentence> }` body (spec: Errors), plus `field` for intake validation errors.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly options: { field?: string; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const invalid = (message: string, field?: string) => new ApiError(400, message, { field });

export const unauthorized = (message: string) =>
  new ApiError(401, message, { headers: { "WWW-Authenticate": 'Bearer realm="api"' } });

export const forbidden = (message: string) => new ApiError(403, message);

export const notFound = (message: string) => new ApiError(404, message);

export const conflict = (message: string) => new ApiError(409, message);

/** How much of a rate budget is left: what the `RateLimit-*` and `Retry-After` headers say. */
export type BudgetUse = { limit: number; remaining: number; resetInSeconds: number; policy?: string };

/**
 * IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers), as most partner SDKs read them: the one place
 * they are built, for answers within a budget and for the 429 past it.
 */
export function rateLimitHeaders(use: BudgetUse): Record<string, string> {
  return {
    ...(use.policy ? { "RateLimit-Policy": use.policy } : {}),
    "RateLimit-Limit": String(use.limit),
    "RateLimit-Remaining": String(use.remaining),
    "RateLimit-Reset": String(use.resetInSeconds),
  };
}

/** A budget is spent (spec: Errors, 429): `Retry-After` says when it comes back. */
export const tooManyRequests = (message: string, use: BudgetUse) =>
  new ApiError(429, message, { headers: { "Retry-After": String(use.resetInSeconds), ...rateLimitHeaders(use) } });

/**
 * The service cannot do it now but will soon (RFC 9110 §15.6.4, 503): `Retry-After` says in how many seconds to try
 * again (RFC 9110 §10.2.3).
 */
export const unavailable = (message: string, retryAfterSeconds: number) =>
  new ApiError(503, message, { headers: { "Retry-After": String(retryAfterSeconds) } });
