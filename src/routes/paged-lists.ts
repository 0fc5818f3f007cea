import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { runOperation } from "../admission/partner-admission";
import type { AppEnv } from "../app-env";
import type { Page } from "../db/pages";
import type { PartnerOperation } from "../domain/access/partner-operation";
import type { ApiError } from "../lib/api-error";
import { idOrNotFound, pathId, queryId, queryInteger, timestamp } from "../lib/validation";
import { errorResponses } from "../schemas/error-body";
import { json, partnerRoute } from "./partner-router";

/*
 * The lists of the partner API and their objects by id, declared alike: `GET /appointments`, `GET /orders` and
 * `GET /events` page newest first with `limit` and `starting_after` (docs/decisions.md, Paging and sync).
 */

type Described<Schema> = [description: string, schema: Schema];

/** A list: its query (a 400 when refused), and a page of objects. */
export function pagedListRoute<const Path extends string, Query extends z.ZodObject, Body extends z.ZodType>(list: {
  path: Path;
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  query: Query;
  page: Described<Body>;
}) {
  const { query, page, ...documented } = list;
  return partnerRoute({
    method: "get",
    ...documented,
    request: { query },
    responses: { 200: { description: page[0], content: json(page[1]) }, ...errorResponses(400, 401, 403) },
  });
}

/** One object of a list, by its id: the object, or the 404 of an id the credential cannot see. */
export function objectRoute<const Path extends string, Params extends z.ZodObject, Body extends z.ZodType>(object: {
  path: Path;
  operationId: string;
  summary: string;
  tags: string[];
  params: Params;
  object: Described<Body>;
}) {
  const { params, object: answer, ...documented } = object;
  return partnerRoute({
    method: "get",
    ...documented,
    request: { params },
    responses: { 200: { description: answer[0], content: json(answer[1]) }, ...errorResponses(401, 403, 404) },
  });
}

/** The path of a booking or an order: its id, a whole number (anything else is the 404 of no such object). */
export const NumericIdPath = z.object({ id: pathId });

/**
 * The query of the bookings' and the orders' lists: `limit` 1 to 100 (25), the list's own filters, then the cursor
 * and the sync's `updated_since` (docs/decisions.md, Paging and sync). Events take no `updated_since`: an event
 * never changes.
 */
export function syncedListQuery<Filters extends z.ZodRawShape>(record: "booking" | "order", filters: Filters) {
  const [a, A] = record === "order" ? ["an", "An"] : ["a", "A"];
  return z.object({
    limit: queryInteger({ min: 1, max: 100, default: 25 }),
    ...filters,
    starting_after: queryId(
      `${a} ${record}`,
      `The id of the last ${record} of the previous page: this page starts after it. ${A} ${record} of another business is a 400.`,
    ),
    updated_since: timestamp.optional().openapi({
      description: `Only ${record}s whose \`updated_at\` is at or after this instant (it does not change the order): for a sync, a minute before the largest \`updated_at\` the previous sync saw`,
    }),
  });
}

/**
 * A list of bookings or orders run: the query as the domain's filters, then the page as the API answers it (the same
 * envelope for both: docs/decisions.md, Paging and sync). Events run apart: their cursor is an event id, their page
 * the envelopes' stored text (src/routes/events.ts).
 */
export const listSynced = <Query extends { starting_after?: number; updated_since?: string }, Item>(
  c: Context<AppEnv, string, { out: { query: Query } }>,
  operation: PartnerOperation<FiltersOf<Query>, Page<Item>, Page<Item>>,
) =>
  runOperation(
    c,
    operation,
    () => {
      const { starting_after, updated_since, ...filters } = c.req.valid("query");
      return { ...filters, startingAfter: starting_after, updatedSince: updated_since };
    },
    (page) => c.json({ data: page.data, has_more: page.hasMore }, 200),
  );

type FiltersOf<Query> = Omit<Query, "starting_after" | "updated_since"> & {
  startingAfter: number | undefined;
  updatedSince: string | undefined;
};

/** A booking or an order by its id, run: an id that is not a whole number is the same 404 as an unknown one. */
export const getByNumericId = <Item>(
  c: Context<AppEnv, string, { out: { param: { id: string } } }>,
  operation: PartnerOperation<number, Item, Item>,
  notFound: () => ApiError,
) =>
  runOperation(
    c,
    operation,
    () => idOrNotFound(c.req.valid("param").id, notFound),
    (item) => c.json(item, 200),
  );
