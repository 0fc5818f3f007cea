import { and, asc, desc, eq, gte, inArray, lt, type Placeholder, type SQL } from "drizzle-orm";
import type { Database } from "../../db/client";
import type { Read } from "../../db/reads";
import { type DELIVERY_STATUSES, deliveryAttempts, events, webhookDeliveries } from "../../db/schema";
import { type Placeheld, statement } from "../../db/statements";
import type { EpochMs } from "../../lib/time";
import { type Reach, reachArgument } from "../access/scope";
import { endpointNotFound } from "./endpoints";
import { keptSince } from "./event-log";
import { receivableDelivery } from "./intake-answers";
import { type EndpointArguments, endpointWithin, reachedEndpointId } from "./sendable-endpoint";

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export type DeliveryFilters = { limit: number; status?: DeliveryStatus; startingAfter?: number };

type PageArguments = EndpointArguments & { kept: string; limit: number; status?: string; after?: number };

/**
 * The deliveries of one page: of the endpoint only while it is within reach (a sub-select, so that another side's
 * endpoint reads nothing at all), kept, of an event the reach could have received (another key's intake answers are
 * not its: src/domain/webhooks/intake-answers.ts), of one status if asked, older than the cursor; newest first by id along the
 * index `webhook_deliveries_endpoint` (endpoint_id, id). A cursor is a position, not a row that must exist: ids grow
 * with time, so one whose delivery was removed by the retention still starts the next page where it was.
 */
function pageOf(db: Database, args: Placeheld<PageArguments>) {
  const { reach, endpoint, kept, limit, status, after } = args;
  return {
    where: and(
      eq(webhookDeliveries.endpointId, reachedEndpointId(db, { reach, endpoint })),
      gte(webhookDeliveries.createdAt, kept),
      receivableDelivery(db, reach),
      status && eq(webhookDeliveries.status, status),
      after && lt(webhookDeliveries.id, after),
    ),
    order: desc(webhookDeliveries.id),
    limit,
  };
}

/** Which deliveries a page holds, in its order, at most `limit`. */
export type DeliveriesPageQuery = { where: SQL | undefined; order: SQL; limit: Placeholder };

/** An attempt as a delivery's history shows it, to the partner (GET /webhooks/{id}/deliveries) and to the owner. */
export const ATTEMPT_COLUMNS = {
  deliveryId: deliveryAttempts.deliveryId,
  attemptedAt: deliveryAttempts.attemptedAt,
  statusCode: deliveryAttempts.statusCode,
  error: deliveryAttempts.error,
  durationMs: deliveryAttempts.durationMs,
};

/**
 * The two statements of a page of deliveries, for one batch: its deliveries, and the attempts of the same deliveries
 * (the page's ids are not known before it runs). The page is `pageOf`'s: one endpoint's (below), or an app endpoint's
 * in one shard (src/domain/webhooks/app-history.ts).
 */
export function deliveriesPageStatements<A extends Record<string, unknown>>(
  pageOf: (db: Database, args: Placeheld<A>) => DeliveriesPageQuery,
) {
  const rows = statement<A>()((db, args) => {
    const page = pageOf(db, args);
    return db
      .select({
        id: webhookDeliveries.id,
        businessId: webhookDeliveries.businessId,
        eventId: webhookDeliveries.eventId,
        event: events.type,
        status: webhookDeliveries.status,
        nextAttemptAt: webhookDeliveries.nextAttemptAt,
        createdAt: webhookDeliveries.createdAt,
      })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(page.where)
      .orderBy(page.order)
      .limit(page.limit);
  });
  const attempts = statement<A>()((db, args) => {
    const page = pageOf(db, args);
    return db
      .select(ATTEMPT_COLUMNS)
      .from(deliveryAttempts)
      .where(
        inArray(
          deliveryAttempts.deliveryId,
          db
            .select({ id: webhookDeliveries.id })
            .from(webhookDeliveries)
            .where(page.where)
            .orderBy(page.order)
            .limit(page.limit),
        ),
      )
      .orderBy(asc(deliveryAttempts.deliveryId), asc(deliveryAttempts.id));
  });
  return (args: A) => [rows(args), attempts(args)];
}

const endpointPage = deliveriesPageStatements<PageArguments>(pageOf);

export type DeliveryRow = {
  id: number;
  businessId: string;
  eventId: string;
  event: string;
  status: DeliveryStatus;
  nextAttemptAt: string;
  createdAt: string;
};
export type AttemptRow = {
  deliveryId: number;
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
};

/**
 * A delivery with its attempts (docs/webhooks.md, Deliveries, redelivery and recovery). `next_attempt_at` only while
 * an attempt is still to come.
 */
export function toDeliveryObject(row: DeliveryRow, attempts: AttemptRow[]) {
  return {
    id: row.id,
    event_id: row.eventId,
    event: row.event,
    status: row.status,
    attempts: attempts.map(({ attemptedAt, statusCode, error, durationMs }) => ({
      attempted_at: attemptedAt,
      status_code: statusCode,
      error,
      duration_ms: durationMs,
    })),
    next_attempt_at: row.status === "pending" ? row.nextAttemptAt : null,
    created_at: row.createdAt,
  };
}

export type DeliveryObject = ReturnType<typeof toDeliveryObject>;
export type DeliveryPage = { deliveries: DeliveryObject[]; hasMore: boolean };

/**
 * The history of one endpoint, where the owner sees failed deliveries (docs/guides/webhooks.md, Answering, retries and
 * the schedule; docs/webhooks.md, Deliveries, redelivery and recovery): newest first, each delivery with its attempts.
 * One read for the partner's `GET /webhooks/{id}/deliveries` (its own side; one round trip with its credential) and for
 * the owner's page (a business id: every side). The endpoint is read too, for the 404 of one out of reach.
 */
export function endpointDeliveries(
  reach: Reach,
  endpointId: number,
  { limit, status, startingAfter }: DeliveryFilters,
  now: EpochMs,
): Read<DeliveryPage> {
  const endpoint = { reach: reachArgument(reach), endpoint: endpointId };
  // One more than the page, to say whether there is another.
  const page = { ...endpoint, kept: keptSince(now), limit: limit + 1, status, after: startingAfter };
  return {
    statements: [endpointWithin(endpoint), ...endpointPage(page)],
    answer: ([endpoints, rows, attempts]) => {
      if ((endpoints as unknown[]).length === 0) throw endpointNotFound();
      const deliveries = rows as DeliveryRow[];
      const attemptsOf = (id: number) => (attempts as AttemptRow[]).filter((attempt) => attempt.deliveryId === id);
      return {
        deliveries: deliveries.slice(0, limit).map((row) => toDeliveryObject(row, attemptsOf(row.id))),
        hasMore: deliveries.length > limit,
      };
    },
  };
}
