import { and, desc, eq, gte, lt, type Placeholder, type SQL, sql } from "drizzle-orm";
import type { AnySQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Database } from "../../db/client";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { SHARD_NAMES, type ShardName } from "../../db/shards";
import { runStatements } from "../../db/statements";
import type { GlobalDependencies } from "../../dependencies";
import { shardOfBusiness } from "../access/directory";
import { getAppEndpoint } from "./app-endpoints";
import {
  type AttemptRow,
  type DeliveryFilters,
  type DeliveryRow,
  deliveriesPageStatements,
  toDeliveryObject,
} from "./delivery-log";
import { keptSince } from "./event-log";

/*
 * An app endpoint's history across the businesses connected to its app (docs/guides/webhooks.md, Subscribing once as
 * an app; docs/scaling.md, An app's history across shards): its deliveries, one more attempt of one, a recover, and
 * the events its app's endpoints were sent. Every delivery names its app endpoint (`app_endpoint_id`), so each shard
 * reads its part along an index, all shards at once, and their pages are merged by id: ids are unique across shards
 * and grow with time (src/db/ids.ts).
 */

/** Narrows an app's history to one business's (`business`); an app endpoint's id in a statement. */
export type OfCopies = { appEndpoint: number; business?: string };

/**
 * The app endpoint's copies in the shard, or the business's copy (one at most: copiesOf makes none twice), found
 * among the business's own endpoints (`webhook_endpoints_business_side`): `+` keeps SQLite off the index of every
 * copy in the shard.
 */
export const copies = (appEndpoint: Placeholder | SQL | number, business: Placeholder | string | undefined) =>
  business === undefined
    ? eq(webhookEndpoints.appEndpointId, appEndpoint)
    : and(eq(webhookEndpoints.businessId, business), sql`+${webhookEndpoints.appEndpointId} = ${appEndpoint}`);

/**
 * The deliveries of the app endpoint's copies in `deliveries` (the table, or an alias of it), newest first along an
 * index: in every business of the shard, a range of `webhook_deliveries_app_endpoint` (app_endpoint_id, id); in one
 * business, its copy's range of `webhook_deliveries_endpoint` (endpoint_id, id).
 */
export const ofCopies = (
  db: Database,
  deliveries: { appEndpointId: AnySQLiteColumn; endpointId: AnySQLiteColumn },
  appEndpoint: Placeholder | SQL,
  business: Placeholder | undefined,
) =>
  business === undefined
    ? eq(deliveries.appEndpointId, appEndpoint)
    : eq(
        deliveries.endpointId,
        db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(copies(appEndpoint, business)),
      );

/**
 * Items of several shards, newest first by `position`, each once: a business being moved has its rows, ids and all,
 * in two shards for a while (docs/scaling.md, Moving a business between shards).
 */
export function merged<T>(pages: T[][], position: (item: T) => number): T[] {
  const items = new Map<number, T>();
  for (const item of pages.flat().sort((a, b) => position(b) - position(a))) {
    if (!items.has(position(item))) items.set(position(item), item);
  }
  return [...items.values()];
}

/**
 * The app's endpoint (its 404 otherwise, another app's included) and the shards its history is in: the named
 * business's alone, by the directory (read at the same time), or every shard.
 */
export async function shardsOf(deps: GlobalDependencies, clientId: string, appEndpointId: number, business?: string) {
  const [, placed] = await Promise.all([
    getAppEndpoint(deps, clientId, appEndpointId),
    business === undefined ? undefined : shardOfBusiness(deps.global, business),
  ]);
  return placed ? [placed.shard] : SHARD_NAMES;
}

/**
 * `read` of every shard of the app endpoint's history, at the same time as the check that the endpoint is the app's
 * (what it read is dropped with the 404 of another app's), or of `business`'s shard once the directory names it.
 */
export async function readShards<T>(
  deps: GlobalDependencies,
  clientId: string,
  appEndpointId: number,
  business: string | undefined,
  read: (shard: ShardName) => Promise<T>,
): Promise<T[]> {
  if (business !== undefined) return Promise.all((await shardsOf(deps, clientId, appEndpointId, business)).map(read));
  const [, pages] = await Promise.all([
    getAppEndpoint(deps, clientId, appEndpointId),
    Promise.all(SHARD_NAMES.map(read)),
  ]);
  return pages;
}

type PageArguments = OfCopies & { kept: string; limit: number; status?: string; after?: number };

/** A shard's page: kept, of one status if asked, older than the cursor (a delivery id: a position). */
const shardPage = deliveriesPageStatements<PageArguments>(
  (db, { appEndpoint, business, kept, limit, status, after }) => ({
    where: and(
      ofCopies(db, webhookDeliveries, appEndpoint, business),
      gte(webhookDeliveries.createdAt, kept),
      status && eq(webhookDeliveries.status, status),
      after && lt(webhookDeliveries.id, after),
    ),
    order: desc(webhookDeliveries.id),
    limit,
  }),
);

/**
 * `GET /app/webhooks/{id}/deliveries`: the app endpoint's deliveries of the last 30 days in every business connected
 * to the app (or in `business` only: one with no copy has none), newest first, each as a business's endpoint lists it
 * with the business's id. Each shard reads a page and one more at once; the merge keeps the page.
 */
export async function appEndpointDeliveries(
  deps: GlobalDependencies,
  clientId: string,
  appEndpointId: number,
  { limit, status, startingAfter, business }: DeliveryFilters & { business?: string },
) {
  const kept = keptSince(deps.clock());
  // One more than the page, to say whether there is another.
  const page = { appEndpoint: appEndpointId, business, kept, limit: limit + 1, status, after: startingAfter };
  const pages = await readShards(deps, clientId, appEndpointId, business, async (shard) => {
    const [rows, attempts] = (await runStatements(deps.onShard(shard).db, shardPage(page))) as [
      DeliveryRow[],
      AttemptRow[],
    ];
    return rows.map((row) => ({
      ...toDeliveryObject(
        row,
        attempts.filter((attempt) => attempt.deliveryId === row.id),
      ),
      business_id: row.businessId,
    }));
  });
  const deliveries = merged(pages, (delivery) => delivery.id);
  return { data: deliveries.slice(0, limit), hasMore: deliveries.length > limit };
}
