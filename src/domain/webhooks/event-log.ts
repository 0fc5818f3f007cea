import { and, desc, eq, gte, type SQL } from "drizzle-orm";
import { afterRow, type Page, readPage } from "../../db/pages";
import { type Read, read } from "../../db/reads";
import { events } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import { notFound } from "../../lib/api-error";
import { type EpochMs, iso } from "../../lib/time";
import type { EventName } from "../../names-and-limits";
import { type Side, type SqlSide, sideArgument } from "../access/scope";
import { receivableBy } from "./audience";

/**
 * Events, deliveries and attempts are kept 30 days (docs/decisions.md, Operations). The Events API, the deliveries of
 * an endpoint and `recover` reach exactly that far, whether or not the retention has removed older rows yet.
 */
export const KEPT_FOR_MS = 30 * 86_400_000;
export const keptSince = (now: EpochMs): string => iso(now - KEPT_FOR_MS);

/**
 * An event is listed to a principal only if it could have been delivered to it, so that no partner reads another's
 * events (docs/webhooks.md, Events you were sent): of its business, and receivable by its side by the stored audience
 * (events.audience, written by `writeEvents` and read here by `receivableBy`, both in audience.ts).
 */
const receivable = (scope: SqlSide): SQL | undefined =>
  and(eq(events.businessId, scope.businessId), receivableBy(scope));

type Kept = { side: ShapedArgument<SqlSide>; kept: string };

/**
 * One page, newest first by (created_at, id): the index `events_business_created` gives the order of created_at, and
 * id breaks the ties of events written in one batch. `after` is the last event of the previous page; its created_at
 * is read by a sub-select, so that the page and the cursor go in the same round trip.
 */
const eventsPage = statement<Kept & { limit: number; type?: string; after?: string }>()(
  (db, { side, kept, limit, type, after }) => {
    return db
      .select({ envelope: events.envelope })
      .from(events)
      .where(
        and(
          receivable(side),
          gte(events.createdAt, kept),
          type && eq(events.type, type),
          after === undefined ? undefined : afterRow(db, events, after),
        ),
      )
      .orderBy(desc(events.createdAt), desc(events.id))
      .limit(limit);
  },
);

/** An event this principal may see: kept, of its business, and receivable by its side. */
const eventWithin = statement<Kept & { id: string }>()((db, { side, kept, id }) =>
  db
    .select({ envelope: events.envelope })
    .from(events)
    .where(and(eq(events.id, id), receivable(side), gte(events.createdAt, kept))),
);

/** Another business's event, or one this principal could not have received, reads exactly as an unknown id. */
export const eventNotFound = () => notFound("No event with that id exists for this credential.");

export type EventFilters = { limit: number; type?: EventName; startingAfter?: string };

/**
 * `GET /events` (docs/webhooks.md, Events you were sent): newest first, optionally of one type, after a cursor. A
 * cursor that is not an event this principal can list (unknown, another business's, not receivable, older than 30 days)
 * is a 400 naming the parameter rather than a 404, since the path names no such event: the page has no place to start.
 */
export function listEvents(reach: Side, filters: EventFilters, now: EpochMs): Read<Page<string>> {
  const scope = { side: sideArgument(reach), kept: keptSince(now) };
  const { limit, type, startingAfter } = filters;
  // One more than the page, to say whether there is another.
  const page = eventsPage({ ...scope, limit: limit + 1, type, after: startingAfter });
  const cursor = startingAfter === undefined ? undefined : eventWithin({ ...scope, id: startingAfter });
  // The stored envelopes are the text that was delivered: a page answers that text, not a parse of it, so that what
  // the partner reads is byte for byte what its endpoint received.
  return readPage(
    limit,
    page,
    cursor,
    (row) => row.envelope,
    'The query parameter "starting_after" is not the id of an event this credential can list (events are kept 30 days).',
  );
}

/** `GET /events/{id}`: the envelope as delivered, or the 404. */
export function getEvent(reach: Side, id: string, now: EpochMs): Read<string> {
  return read(eventWithin({ side: sideArgument(reach), kept: keptSince(now), id }), ([row]) => {
    if (!row) throw eventNotFound();
    return row.envelope;
  });
}
