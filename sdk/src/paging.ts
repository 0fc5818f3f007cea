// Reading a whole list, page after page (docs/guides/syncing.md): every list of the document that answers `data` and
// `has_more`, found from the generated types, so that a list added to the API is paged without a change here.
import { type PartnerClient, unwrap } from "./client.js";
import type { paths } from "./partner-api.js";

/** The body of a path's GET 200, if it has one. */
type ListBody<Path extends keyof paths> = paths[Path] extends {
  get: { responses: { 200: { content: { "application/json": infer Body } } } };
}
  ? Body
  : never;

/** Every path whose GET answers a page: `data`, an array, and `has_more`. */
export type PagedPath = {
  [Path in keyof paths]: [ListBody<Path>] extends [never]
    ? never
    : ListBody<Path> extends { data: unknown[]; has_more: boolean }
      ? Path
      : never;
}[keyof paths];

type ListParameters<Path extends PagedPath> = paths[Path] extends { get: { parameters: infer Parameters } }
  ? Parameters
  : never;
/** A list's item: a booking, an order, an event envelope, a delivery. */
export type PageItem<Path extends PagedPath> = ListBody<Path> extends { data: (infer Item)[] } ? Item : never;
/** A list's query, but for `starting_after`, which the iterator sets. */
export type PageQuery<Path extends PagedPath> =
  ListParameters<Path> extends { query?: infer Query } ? Omit<NonNullable<Query>, "starting_after"> : never;
/** A list's path parameters (`{ id }` of `/webhooks/{id}/deliveries`), or never for a path without any. */
export type PagePathParams<Path extends PagedPath> =
  ListParameters<Path> extends { path?: infer Params } ? NonNullable<Params> : never;
/** The arguments after the path: the query, optional, then the path parameters where the path has any. */
type PageArguments<Path extends PagedPath> = [PagePathParams<Path>] extends [never]
  ? [query?: PageQuery<Path>]
  : [query: PageQuery<Path> | undefined, pathParams: PagePathParams<Path>];

type Page = { data: { id: string | number }[]; has_more: boolean };

/**
 * Every item of a list, page after page, as an async iterator: `for await (const booking of paginate(client,
 * "/appointments", { status: "confirmed" }))`, or
 * `paginate(client, "/webhooks/{id}/deliveries", { status: "failed" }, { id })`. A page starts after the last id of the one before, while
 * `has_more` says more follow (docs/guides/syncing.md). A refused page throws `PartnerApiError`; `break` stops early.
 */
export async function* paginate<Path extends PagedPath>(
  client: PartnerClient,
  path: Path,
  ...[first, pathParams]: PageArguments<Path>
): AsyncGenerator<PageItem<Path>, void, undefined> {
  // openapi-fetch types each path's call apart; over a union of paths the call goes through this one signature, and
  // what it answers is typed again by `PageItem<Path>`.
  const get = client.GET as unknown as (
    path: PagedPath,
    init: { params: { query: Record<string, unknown>; path?: object } },
  ) => Promise<{ data?: Page; error?: unknown; response: Response }>;
  const query: Record<string, unknown> = { ...first };
  for (;;) {
    const page = await unwrap(get(path, { params: { query, path: pathParams } }));
    yield* page.data as PageItem<Path>[];
    const last = page.data.at(-1)?.id;
    if (!page.has_more || last === undefined) return;
    query.starting_after = last;
  }
}
