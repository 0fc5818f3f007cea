import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../app-env";
import { bearerChallenge } from "../domain/oauth/protected-resource";
import { ApiError } from "../lib/api-error";
import { ERROR_CODES, type ErrorCode } from "../lib/error-codes";
import { loggableError } from "../lib/loggable-error";
import { OAuthError } from "../lib/oauth-errors";

/** Bodies are JSON (docs/guides/getting-started.md, Where to send requests): the sentence of another type. */
export const NOT_JSON_BODY = "The request body must be sent as application/json.";

/** The sentence of a body sent as JSON that does not parse. */
export const NOT_VALID_JSON = "The request body is not valid JSON.";

/** `application/json` or a `+json` type, whatever its parameters (`; charset=utf-8`). */
export const JSON_CONTENT_TYPE = /^\s*application\/([\w.-]+\+)?json\s*(;|$)/i;

/**
 * How the API answers what Hono's own middleware raises (validators, body limit): the status and a sentence in the
 * API's voice (docs/errors.md, Codes). The partner validators' media-type check raises 415: a body of the wrong
 * content type is answered 400 naming the type instead (docs/decisions.md, Errors).
 */
const FRAMEWORK_ANSWERS: Partial<Record<number, { code: ErrorCode; error: string }>> = {
  400: { code: "invalid_json", error: NOT_VALID_JSON },
  413: { code: "body_too_large", error: "The request body is too large." },
  415: { code: "invalid_content_type", error: NOT_JSON_BODY },
};

/**
 * Every error body of the JSON API (docs/errors.md): the sentence, its stable `code`, `param` where one
 * input is at fault, `field` for intake validation, and the request's id, which the `X-Request-Id` header and the
 * request's log line carry too, so that a partner who quotes it points at the one line that tells what happened.
 */
function errorBody(
  c: Context,
  code: ErrorCode,
  error: string,
  { param, field }: { param?: string | undefined; field?: string | null | undefined } = {},
) {
  const body = {
    error,
    code,
    ...(param === undefined ? {} : { param }),
    ...(field === undefined ? {} : { field }),
    request_id: c.get("requestId") as string,
  };
  return c.json(body, ERROR_CODES[code].status);
}

/** An error's own headers, appended: a 429's RateLimit fields join the request budget's policy already named. */
function setErrorHeaders(c: Context, headers: [name: string, value: string][] = []) {
  for (const [name, value] of headers) c.header(name, value, { append: true });
}

/**
 * The error mappings of the service, one per surface, each chosen by the error's class: the JSON API (docs/errors.md),
 * the OAuth endpoints (RFC 6749 errors) and the owner's HTML pages.
 */

/**
 * The JSON API's mapping (docs/errors.md): every failure leaves as the one error body with its code's status.
 * Unexpected errors are logged with the request id and answered 500 without any detail: no stack trace, message or
 * secret ever reaches a response.
 */
export const respondToError: ErrorHandler<AppEnv> = (err, c) => answerError(err, c, undefined);

/**
 * `/intakes`: every 400 carries `field`, the member at fault or null when the body as a whole is (not JSON, not an
 * object, not sent as JSON), as intake errors are `{ error, field }` (docs/guides/intakes.md, Registering an intake).
 */
export const respondToIntakeError: ErrorHandler<AppEnv> = (err, c) => answerError(err, c, null);

/** `bodyField`: the `field` of a 400 that names no member. */
function answerError(err: Error, c: Context<AppEnv>, bodyField: null | undefined) {
  const fieldOf = (code: ErrorCode, field?: string) =>
    field ?? (ERROR_CODES[code].status === 400 ? bodyField : undefined);
  if (err instanceof ApiError) {
    setErrorHeaders(c, err.options.headers);
    if (err.options.challenge) c.header("WWW-Authenticate", bearerChallenge(c.env.BASE_URL, err.options.challenge));
    return errorBody(c, err.code, err.message, {
      param: err.options.param,
      field: fieldOf(err.code, err.options.field),
    });
  }
  if (err instanceof HTTPException && err.status < 500) {
    const { code, error } = FRAMEWORK_ANSWERS[err.status] ?? {
      code: "invalid_request",
      error: "The request cannot be processed.",
    };
    return errorBody(c, code, error, { field: fieldOf(code) });
  }
  logUnexpected(c, err);
  return errorBody(c, "internal_error", "Something failed on our side; retry with a short backoff.");
}

/** An unexpected error's one log line: its name and message (never a query's values), with the request id. */
function logUnexpected(c: Context, err: Error) {
  console.error(JSON.stringify({ level: "error", requestId: c.get("requestId"), ...loggableError(err) }));
}

/** The owner's page for an unexpected error: nothing of the error itself, as on the API. */
export const PAGE_SERVER_ERROR = "Something failed on our side, and nothing was changed by it. Try again in a moment.";

export const respondNotFound: NotFoundHandler<AppEnv> = (c) =>
  errorBody(c, "route_not_found", `Nothing is at ${c.req.method} ${c.req.path}.`);

export const respondMethodNotAllowed = (c: Context, allowed: string[]) => {
  c.header("Allow", allowed.join(", "));
  return errorBody(
    c,
    "method_not_allowed",
    `${c.req.method} is not allowed on ${c.req.path}; use ${allowed.join(" or ")}.`,
  );
};

/**
 * RFC 6749 §5.1 (and RFC 7591 §3.2.1, RFC 7009 §2.2): answers of `/api/oauth`, errors included, carry or concern
 * credentials and are never cached: `Cache-Control: no-store` (docs/architecture.md, OAuth).
 */
export function doNotStore(c: Context) {
  c.header("Cache-Control", "no-store");
  c.header("Pragma", "no-cache");
}

/**
 * `/api/oauth`: OAuth errors leave as RFC 6749 §5.2's `{ error, error_description }`, the rest as the API's
 * (docs/decisions.md, Errors).
 */
export const respondToOAuthError: ErrorHandler<AppEnv> = (err, c) => {
  // A server that cannot serve now (a business being moved) answers in OAuth's shape too, 503 with Retry-After
  // (RFC 6749 §4.1.2.1's temporarily_unavailable; RFC 7009 §2.2.1).
  if (err instanceof ApiError && err.code === "temporarily_unavailable") {
    doNotStore(c);
    setErrorHeaders(c, err.options.headers);
    return c.json({ error: err.code, error_description: err.message }, err.status);
  }
  if (!(err instanceof OAuthError)) return respondToError(err, c);
  doNotStore(c);
  for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
  return c.json({ error: err.error, error_description: err.description }, err.status);
};

/**
 * The owner's pages (the dashboard, the consent page): a refusal of the service (ApiError) or of Hono's middleware
 * (HTTPException, such as the CSRF Origin check) becomes a page saying why, drawn by the surface; anything else is
 * logged as the API logs it and becomes the surface's page too, with status 500 and nothing of the error: a browser
 * gets a page it can show, never the API's JSON.
 */
export const respondToPageError =
  <E extends AppEnv>(
    page: (c: Context<E>, status: ContentfulStatusCode, message: string) => Response | Promise<Response>,
  ): ErrorHandler<E> =>
  (err, c) => {
    if (err instanceof ApiError) {
      // A refusal's headers go with its page too: a 503's `Retry-After` (RFC 9110 §10.2.3).
      setErrorHeaders(c, err.options.headers);
      return page(c, err.status, err.message);
    }
    if (err instanceof HTTPException && err.status < 500) {
      return page(c, err.status as ContentfulStatusCode, err.message || "The request cannot be processed.");
    }
    logUnexpected(c, err);
    return page(c, 500, PAGE_SERVER_ERROR);
  };
