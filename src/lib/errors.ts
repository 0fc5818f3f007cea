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
