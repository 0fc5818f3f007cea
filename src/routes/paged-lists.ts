import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { runOperation } from "../admission/partner-admission";
import type { AppEnv } from "../app-env";
import type { Page } from "../db/pages";
import type { PartnerOperation } from "../domain/access/partner-operation";
import { queryId, queryInteger, timestamp } from "../lib/validation";
import { errorResponses } from "../schemas/error-body";
import { json } from "./partner-router";

/**
 * The request and answers of a paged list (`GET /appointments`, `GET /orders`, `GET /events`): its query, refused
 * with a 400, and a page, `data` newest first and `has_more` (docs/decisions.md, Paging and sync).
 */
export const pagedList = <Query extends z.ZodObject, Body extends z.ZodType>(
  query: Query,
  description: string,
  page: Body,
) => ({
  request: { query },
  responses: { 200: { description, content: json(page) }, ...errorResponses(400, 401, 403) },
});

/**
 * The query of the bookings' and the orders' lists: `limit` 1 to 100 (25), the list's own filters, then the cursor,
 * an id, and the sync's `updated_since` (docs/decisions.md, Paging and sync). Events have their own: their cursor is
 * an event id, and an event never changes.
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

/** That query as the domain's filters: the same members, in the domain's names. */
type FiltersOf<Query> = Omit<Query, "starting_after" | "updated_since"> & {
  startingAfter: number | undefined;
  updatedSince: string | undefined;
};

/**
 * A list of bookings or orders run, and its page answered as JSON. Events run apart (src/routes/events.ts): their
 * page is answered as the envelopes' stored text.
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
