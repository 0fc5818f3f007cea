// The typed client of the Secretary Partner API (docs/openapi.md): openapi-fetch over the types openapi-typescript
// generates from openapi.json (partner-api.d.ts, written by `npm run openapi`), an error class for the one error body
// of the API (docs/errors.md), and an iterator over the pages of the lists (docs/syncing.md).
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./partner-api";

/** The production address of `/api/v1` (the document's `servers`). */
export const DEFAULT_BASE_URL = "https://partners.secretary.example/api/v1";

export type PartnerClient = Client<paths>;

export type PartnerClientOptions = {
  /** `/api/v1` of another deployment, e.g. `http://localhost:8787/api/v1`. */
  baseUrl?: string;
  /** The fetch to send requests with (a test's, a Worker's service binding); the global `fetch` by default. */
  fetch?: (request: Request) => Promise<Response>;
  /** More headers for every request, e.g. a `User-Agent` of your own. */
  headers?: Record<string, string>;
};

/** A client for one credential: an API key (`sk_live_…`, `sk_test_…`) or an OAuth access token (`at_live_…`). */
export function createPartnerClient(credential: string, options: PartnerClientOptions = {}): PartnerClient {
  return createClient<paths>({
    baseUrl: options.baseUrl ?? DEFAULT_BASE_URL,
    headers: { ...options.headers, Authorization: `Bearer ${credential}` },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

export type ApiErrorBody = components["schemas"]["Error"];
export type ApiErrorCode = ApiErrorBody["code"];

/**
 * A refusal of the API, for a program: its stable `code` to branch on, the `param` at fault (a query parameter, a
 * body field), the `requestId` to quote when asking for help, and the HTTP `status` (docs/errors.md). An answer that
 * is not the API's error body (a proxy's page) has the code `unexpected_answer` and the `X-Request-Id` if any.
 */
export class PartnerApiError extends Error {
  readonly code: ApiErrorCode | "unexpected_answer";
  readonly param: string | undefined;
  readonly requestId: string;
  readonly status: number;

  constructor(status: number, body: unknown, requestId: string | null = null) {
    const error = isErrorBody(body) ? body : undefined;
    super(error?.error ?? `The API answered ${status} without an error body.`);
    this.name = "PartnerApiError";
    this.status = status;
    this.code = error?.code ?? "unexpected_answer";
    this.param = error?.param;
    this.requestId = error?.request_id ?? requestId ?? "";
  }
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

/** The lists that page by `starting_after` and `has_more` (docs/syncing.md). */
export type PagedPath = "/appointments" | "/orders" | "/events";
type ListOperation<Path extends PagedPath> = paths[Path]["get"];
/** A list's query, but for `starting_after`, which the iterator sets. */
export type PageQuery<Path extends PagedPath> = Omit<
  NonNullable<ListOperation<Path>["parameters"]["query"]>,
  "starting_after"
>;
type Page<Path extends PagedPath> = ListOperation<Path>["responses"][200]["content"]["application/json"];
/** A list's item: a booking, an order, an event envelope. */
export type PageItem<Path extends PagedPath> = Page<Path>["data"][number];

/**
 * Every item of a list, page after page, as an async iterator: `for await (const booking of paginate(client,
 * "/appointments", { status: "confirmed" }))`. A page starts after the last id of the one before, while `has_more`
 * says more follow (docs/syncing.md, Reading everything once). A refused page throws `PartnerApiError`.
 */
export async function* paginate<Path extends PagedPath>(
  client: PartnerClient,
  path: Path,
  query: PageQuery<Path> = {} as PageQuery<Path>,
): AsyncGenerator<PageItem<Path>, void, undefined> {
  // openapi-fetch types each path's call apart; over the union of three paths, the call is made through this one
  // signature, and what it answers is typed again by `Page<Path>`.
  const get = client.GET as unknown as (
    path: PagedPath,
    init: { params: { query: Record<string, unknown> } },
  ) => Promise<{ data?: Page<Path>; error?: unknown; response: Response }>;
  let startingAfter: PageItem<Path>["id"] | undefined;
  for (;;) {
    const params = { query: startingAfter === undefined ? query : { ...query, starting_after: startingAfter } };
    const page = await unwrap(get(path, { params }));
    yield* page.data as PageItem<Path>[];
    startingAfter = page.data.at(-1)?.id;
    if (!page.has_more || startingAfter === undefined) return;
  }
}
