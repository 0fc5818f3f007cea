// The typed client of the Secretary Partner API (docs/openapi.md): openapi-fetch over the types openapi-typescript
// generates from openapi.json (partner-api.d.ts, written by `npm run openapi`), sending through requests.ts, and an
// error class for the one error body of the API (docs/errors.md).
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./partner-api.js";
import { type Fetch, type RetryOptions, sendingWith } from "./requests.js";

/** The production address of `/api/v1` (the document's `servers`). */
export const DEFAULT_BASE_URL = "https://partners.secretary.example/api/v1";

export type PartnerClient = Client<paths>;

export type PartnerClientOptions = {
  /** `/api/v1` of another deployment, e.g. `http://localhost:8787/api/v1`. */
  baseUrl?: string;
  /** The fetch to send requests with (a test's, a Worker's service binding); the global `fetch` by default. */
  fetch?: Fetch;
  /** More headers for every request, e.g. a `User-Agent` of your own instead of the SDK's. */
  headers?: Record<string, string>;
  /** How 429s, 5xx answers and failed connections are retried (README.md, Retries and idempotency). */
  retries?: RetryOptions;
};

/**
 * A client for one credential: an API key (`sk_live_…`, `sk_test_…`), an OAuth access token of a connection
 * (`at_live_…`), or the app's own token (`at_app_…`, from `requestAppToken`), which the app's routes (`/app/…`) take.
 */
export function createPartnerClient(credential: string, options: PartnerClientOptions = {}): PartnerClient {
  return createClient<paths>({
    baseUrl: options.baseUrl ?? DEFAULT_BASE_URL,
    headers: { ...options.headers, Authorization: `Bearer ${credential}` },
    // The global fetch is looked up per request, so that one replaced after the client was made (a test's) is used.
    fetch: sendingWith(options.fetch ?? ((request) => fetch(request)), options.retries),
  });
}

export type ApiErrorBody = components["schemas"]["Error"];
export type ApiErrorCode = ApiErrorBody["code"];

/**
 * A refusal of the API, for a program: its stable `code` to branch on, the `param` at fault (a query parameter, a
 * body field), the `requestId` to quote when asking for help, and the HTTP `status` (docs/errors.md). An answer that
 * is not the API's error body (a proxy's page, or the token endpoint's OAuth error, whose `error_description` is then
 * the message) has the code `unexpected_answer` and the `X-Request-Id` if any.
 */
export class PartnerApiError extends Error {
  readonly code: ApiErrorCode | "unexpected_answer";
  readonly param: string | undefined;
  readonly requestId: string;
  readonly status: number;

  constructor(status: number, body: unknown, requestId: string | null = null) {
    const error = isErrorBody(body) ? body : undefined;
    super(error?.error ?? oauthErrorSentence(body) ?? `The API answered ${status} without an error body.`);
    this.name = "PartnerApiError";
    this.status = status;
    this.code = error?.code ?? "unexpected_answer";
    this.param = error?.param;
    this.requestId = error?.request_id ?? requestId ?? "";
  }
}

/** An OAuth error's sentence (RFC 6749 §5.2): its `error_description`, else its `error` code. */
function oauthErrorSentence(body: unknown): string | undefined {
  const { error, error_description } = (typeof body === "object" && body !== null ? body : {}) as Record<
    string,
    unknown
  >;
  if (typeof error_description === "string") return error_description;
  return typeof error === "string" ? error : undefined;
}

function isErrorBody(body: unknown): body is ApiErrorBody {
  if (typeof body !== "object" || body === null) return false;
  const { error, code, request_id } = body as Record<string, unknown>;
  return typeof error === "string" && typeof code === "string" && typeof request_id === "string";
}

/** What every openapi-fetch method answers: the typed body, or the error, with the response. */
type Outcome = { data?: unknown; error?: unknown; response: Response };
/** The body of the success branch of an outcome (the error branch's `data` is undefined). */
type DataOf<Answer extends Outcome> = Exclude<Answer["data"], undefined>;

/**
 * The body of a successful answer, or a `PartnerApiError` thrown for a refused one:
 * `const me = await unwrap(client.GET("/me"))`.
 */
export async function unwrap<Answer extends Outcome>(pending: Promise<Answer> | Answer): Promise<DataOf<Answer>> {
  const { data, error, response } = await pending;
  if (error !== undefined || !response.ok) {
    throw new PartnerApiError(response.status, error, response.headers.get("X-Request-Id"));
  }
  return data as DataOf<Answer>;
}
