import { and, desc, eq, exists, gte, inArray, isNotNull, lt, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import type { Database } from "../../db/client";
import { events, webhookDeliveries } from "../../db/schema";
import { SHARD_NAMES } from "../../db/shards";
import { runStatements, statement } from "../../db/statements";
import type { GlobalDependencies } from "../../dependencies";
import { invalid } from "../../lib/api-error";
import { shardOfBusiness } from "../access/directory";
import { listAppEndpoints } from "./app-endpoints";
import { merged, ofCopies } from "./app-history";
import type { EventFilters } from "./event-log";
import { keptSince } from "./event-log";

/*
 * The events an app's endpoints were sent, across the businesses connected to the app (docs/guides/webhooks.md,
 * Subscribing once as an app; docs/scaling.md, An app's history across shards): each shard's page along the index of
 * the app endpoints' deliveries, merged by position.
 */

const newest = alias(webhookDeliveries, "newest");

type EventsArguments = {
  endpoints: string;
  business?: string;
  type?: string;
  kept: string;
  before?: number;
  limit: number;
};

/**
 * A shard's page of the events delivered to the app's endpoints (`endpoints`, a JSON array of ids), each once, newest
 * first by its position: the lowest id of its deliveries to them. An event reaches an app's endpoints in one
 * INSERT … SELECT (outbox/write.ts), so in a shard its deliveries to them have consecutive ids: each endpoint's newest
 * `limit` deliveries below the cursor (a correlated range of the index per endpoint, not a sort of its whole history)
 * hold the newest `limit` events whole. A `type` is checked on each delivery's event, by its key.
 */
const shardEvents = statement<EventsArguments>()((db, { endpoints, business, type, kept, before, limit }) => {
  const endpoint = sql`app_endpoint.value`;
  const newestOfEndpoint = db
    .select({ id: newest.id })
    .from(newest)
    .where(
      and(
        ofCopies(db, newest, endpoint, business),
        gte(newest.createdAt, kept),
        before && lt(newest.id, before),
        type &&
          exists(
            db
              .select({ one: sql`1` })
              .from(events)
              .where(and(eq(events.id, newest.eventId), eq(events.type, type))),
          ),
      ),
    )
    .orderBy(desc(newest.id))
    .limit(limit);
  const position = sql<number>`min(${webhookDeliveries.id})`;
  return db
    .select({ envelope: events.envelope, position })
    .from(sql`json_each(${endpoints}) as app_endpoint`)
    .innerJoin(webhookDeliveries, inArray(webhookDeliveries.id, newestOfEndpoint))
    .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
    .groupBy(events.id)
    .orderBy(desc(position))
    .limit(limit);
});

/** A cursor's position in one shard: the deliveries of the event `event` to app endpoints, kept. */
const eventDeliveries = (db: Database, event: string, kept: string) =>
  db
    .select({ appEndpoint: webhookDeliveries.appEndpointId, id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.eventId, event),
        isNotNull(webhookDeliveries.appEndpointId),
        gte(webhookDeliveries.createdAt, kept),
      ),
    );

/**
 * `GET /app/events`: the envelopes delivered to the app's endpoints in the last 30 days, in every business connected
 * to it (or in `business`), newest first, each once. The app's endpoints, the business's shard and the cursor's
 * position (the lowest id of its event's deliveries to them, in whichever shard holds it) are read at once; then
 * each shard's page, at once. A cursor that is no event the app's endpoints were sent is a 400, as on `GET /events`.
 */
export async function appEvents(
  deps: GlobalDependencies,
  clientId: string,
  { limit, type, startingAfter, business }: EventFilters & { business?: string },
) {
  const kept = keptSince(deps.clock());
  const [endpoints, placed, cursor] = await Promise.all([
    listAppEndpoints(deps, clientId),
    business === undefined ? undefined : shardOfBusiness(deps.global, business),
    startingAfter === undefined
      ? undefined
      : Promise.all(SHARD_NAMES.map((shard) => eventDeliveries(deps.onShard(shard).db, startingAfter, kept))),
  ]);
  const ids = endpoints.map((endpoint) => endpoint.id);
  const positions = (cursor ?? []).flat().filter((row) => row.appEndpoint !== null && ids.includes(row.appEndpoint));
  if (cursor && positions.length === 0) {
    throw invalid(
      `The query parameter "starting_after" is not the id of an event sent to this app's endpoints (events are kept 30 days).`,
      "starting_after",
    );
  }
  if (ids.length === 0) return { data: [], hasMore: false };
  const args = {
    endpoints: JSON.stringify(ids),
    business,
    type,
    kept,
    before: cursor && Math.min(...positions.map((row) => row.id)),
    limit: limit + 1,
  };
  const pages = await Promise.all(
    (placed ? [placed.shard] : SHARD_NAMES).map(
      async (shard) =>
        (
          (await runStatements(deps.onShard(shard).db, [shardEvents(args)])) as [
            Array<{ envelope: string; position: number }>,
          ]
        )[0],
    ),
  );
  const page = merged(pages, (row) => row.position);
  return { data: page.slice(0, limit).map((row) => row.envelope), hasMore: page.length > limit };
}
