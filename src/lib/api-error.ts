import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ERROR_CODES, type ErrorCode } from "./error-codes";
import { type BudgetUse, rateLimitHeaders } from "./rate-limit-fields";

/**
 * The one exception class of the service. Domain functions throw it; `app.onError` turns it into its status and
 * body (docs/errors.md): the sentence under `error`, the stable `code` (src/lib/error-codes.ts), `param` where one
 * input is at fault, and `field` for intake validation errors.
 */
export class ApiError extends Error {
  readonly status: ContentfulStatusCode;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: {
      param?: string;
      field?: string;
      headers?: [name: string, value: string][];
      challenge?: BearerChallenge;
    } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERROR_CODES[code].status;
  }
}

/** A 400: `param` names the input at fault, when one is; without it, the request as a whole is. */
export const invalid = (message: string, param?: string, code?: ErrorCode) =>
  new ApiError(code ?? (param === undefined ? "invalid_request" : "parameter_invalid"), message, { param });

/** A 400 of intake validation: `field` names the member at fault, and `param` too (docs/intakes.md, Validation). */
export const invalidField = (message: string, field: string, code: ErrorCode = "parameter_invalid") =>
  new ApiError(code, message, { param: field, field });

/** A 401's challenge: `invalid_token` says that an access token was refused (RFC 6750 §3.1). */
export type BearerChallenge = "bearer" | "invalid_token";

/**
 * A 401 of the partner API. Its `WWW-Authenticate` names the API's metadata, an address of the deployment, so the
 * error mapping writes it (`bearerChallenge`, src/domain/oauth/protected-resource.ts).
 */
export const unauthorized = (
  message: string,
  code: ErrorCode = "invalid_credential",
  challenge: BearerChallenge = "bearer",
) => new ApiError(code, message, { challenge });

export const forbidden = (message: string, code: ErrorCode) => new ApiError(code, message);

export const notFound = (message: string) => new ApiError("not_found", message);

export const conflict = (message: string, code: ErrorCode = "concurrent_change") => new ApiError(code, message);

/** A budget is spent: 429, `Retry-After` says when it comes back, RateLimit which policy (docs/rate-limits.md). */
export const tooManyRequests = (message: string, use: BudgetUse) =>
  new ApiError("rate_limited", message, {
    headers: [["Retry-After", String(use.resetInSeconds)], ...rateLimitHeaders(use)],
  });

/**
 * The service cannot do it now but will soon (RFC 9110 §15.6.4, 503): `Retry-After` says in how many seconds to try
 * again (RFC 9110 §10.2.3).
 */
export const unavailable = (message: string, retryAfterSeconds: number) =>
  new ApiError("temporarily_unavailable", message, { headers: [["Retry-After", String(retryAfterSeconds)]] });
