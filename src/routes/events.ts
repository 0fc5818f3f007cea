import type { z } from "@hono/zod-openapi";
import type { Context, TypedResponse } from "hono";
import { runOperation } from "../admission/partner-admission";
import type { AppEnv } from "../app-env";
import type { Page } from "../db/pages";
import { getEventOperation, listEventsOperation } from "../domain/webhooks/webhook-operations";
import { errorResponses } from "../schemas/error-body";
import { EnvelopeObject, EventPath, EventsPage, EventsQuery } from "../schemas/webhook-operations";
import { pagedList } from "./paged-lists";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

const listRoute = partnerRoute({
  method: "get",
  path: "/events",
  operationId: "listEvents",
  summary: "Events of the last 30 days, newest first",
  description:
    "Every event this credential could have received: the business's events, and intake.completed of its own intakes.",
  tags: ["Events"],
  ...pagedList(EventsQuery, "A page of envelopes, each exactly as delivered", EventsPage),
});

const getRoute = partnerRoute({
  method: "get",
  path: "/events/{id}",
  operationId: "getEvent",
  summary: "One event, as delivered",
  tags: ["Events"],
  request: { params: EventPath },
  responses: {
    200: { description: "The envelope", content: json(EnvelopeObject) },
    ...errorResponses(401, 403, 404),
  },
});

/**
 * The stored envelopes are the text that was delivered: answered as that text, not parsed and serialised again, so
 * that a partner reads byte for byte what its endpoint received (docs/decisions.md, Webhooks a partner can operate).
 * Typed as the JSON the route documents, which that text is.
 */
const storedJson = <T>(c: Context<AppEnv>, text: string) =>
  c.body(text, 200, { "Content-Type": "application/json" }) as unknown as TypedResponse<T, 200, "json">;

/** A page of stored envelopes, as `GET /events` and `GET /app/events` answer it. */
export const envelopesPage = (c: Context<AppEnv>, page: Page<string>) =>
  storedJson<z.infer<typeof EventsPage>>(c, `{"data":[${page.data.join(",")}],"has_more":${page.hasMore}}`);

/**
 * The Events API, `GET /events` and `GET /events/{id}` (docs/webhooks.md, Operating your integration), one D1 round
 * trip each.
 */
export const eventsApi = createPartnerRouter()
  .openapi(listRoute, (c) =>
    runOperation(
      c,
      listEventsOperation,
      () => {
        const { type, limit, starting_after } = c.req.valid("query");
        return { type, limit, startingAfter: starting_after };
      },
      (page) => envelopesPage(c, page),
    ),
  )
  .openapi(getRoute, (c) =>
    runOperation(
      c,
      getEventOperation,
      () => c.req.valid("param").id,
      (envelope) => storedJson<z.infer<typeof EnvelopeObject>>(c, envelope),
    ),
  );
