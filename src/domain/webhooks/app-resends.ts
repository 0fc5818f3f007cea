import { and, eq, gte, inArray, isNull } from "drizzle-orm";
import { businesses, webhookDeliveries, webhookEndpoints } from "../../db/schema";
import type { ShardName } from "../../db/shards";
import { runStatements, statement } from "../../db/statements";
import type { GlobalDependencies } from "../../dependencies";
import { businessMoving } from "../access/business-moving";
import { copies, type OfCopies, readShards, shardsOf } from "./app-history";
import { type AppLimits, takeAppRecover, takeAppSend } from "./endpoint-budgets";
import { keptSince } from "./event-log";
import { recoverSince, recoverStatements } from "./recovery";
import { deliveryNotFound, sendDeliveryAgain } from "./redelivery";
import { endpointDisabled } from "./sendable-endpoint";

/*
 * One more attempt of an app endpoint's delivery, and a recover of its copies, across the businesses connected to its
 * app (docs/guides/webhooks.md, Subscribing once as an app): each in the shard that holds the delivery or the copy,
 * with one budget for the app endpoint.
 */

type AppDelivery = { businessId: string; endpointId: number; status: string; movingSince: string | null };

/**
 * One shard's delivery `delivery` of the app endpoint, kept: its business (and whether it is being moved) and the
 * copy it goes to, with the copy's status.
 */
const appDelivery = statement<{ appEndpoint: number; delivery: number; kept: string }>()(
  (db, { appEndpoint, delivery, kept }) =>
    db
      .select({
        businessId: webhookDeliveries.businessId,
        endpointId: webhookDeliveries.endpointId,
        status: webhookEndpoints.status,
        movingSince: businesses.movingSince,
      })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .innerJoin(businesses, eq(businesses.id, webhookDeliveries.businessId))
      .where(
        and(
          eq(webhookDeliveries.id, delivery),
          eq(webhookDeliveries.appEndpointId, appEndpoint),
          gte(webhookDeliveries.createdAt, kept),
        ),
      ),
);

/**
 * `POST /app/webhooks/{id}/deliveries/{delivery_id}/redeliver`: the delivery looked for in every shard at once (a
 * business keeps its ids when it moves, so an id does not name its shard), with the app's endpoint; 404 unless it is
 * one of the endpoint's copies', 409 if that copy is disabled (its business disconnected the app), 503 while its
 * business is moved; then the app endpoint's budget (429), then the owner's Send again in the business's shard: one
 * more attempt of the same delivery (redelivery.ts).
 */
export async function redeliverAppDelivery(
  deps: GlobalDependencies & AppLimits,
  clientId: string,
  appEndpointId: number,
  deliveryId: number,
) {
  const now = deps.clock();
  const lookup = appDelivery({ appEndpoint: appEndpointId, delivery: deliveryId, kept: keptSince(now) });
  const found = await readShards(deps, clientId, appEndpointId, undefined, async (shard) => {
    const [rows] = await runStatements(deps.onShard(shard).db, [lookup]);
    return (rows as AppDelivery[]).map((row) => ({ ...row, shard }));
  });
  const [delivery] = found.flat();
  if (!delivery) throw deliveryNotFound();
  if (delivery.movingSince !== null) throw businessMoving();
  if (delivery.status !== "enabled") throw endpointDisabled();
  const budgets = await takeAppSend(deps, clientId, appEndpointId);
  const shardDeps = deps.onShard(delivery.shard);
  const sent = await sendDeliveryAgain(shardDeps, delivery.businessId, delivery.endpointId, deliveryId, now);
  return { delivery: sent, budgets };
}

/**
 * A recover of the copies enabled (a disconnected business's are not), of businesses not being moved (an attempt
 * owed in the shard a business leaves would stay behind): each copy's ranges of
 * `webhook_deliveries_endpoint_status`, as one endpoint's recover reads them.
 */
const copiesRecover = recoverStatements<OfCopies & { since: string; kept: string; now: string }>(
  (db, { appEndpoint, business }) =>
    inArray(
      webhookDeliveries.endpointId,
      db
        .select({ id: webhookEndpoints.id })
        .from(webhookEndpoints)
        .innerJoin(businesses, eq(businesses.id, webhookEndpoints.businessId))
        .where(
          and(copies(appEndpoint, business), eq(webhookEndpoints.status, "enabled"), isNull(businesses.movingSince)),
        ),
    ),
);

/**
 * `POST /app/webhooks/{id}/recover`: what a business endpoint's recover sends (recovery.ts), for every copy of the
 * app endpoint at once, shard by shard (or `business`'s copy only, 409 when it is disabled, checked before the
 * budget); one budget for all (429). Answers how many deliveries are sent now.
 */
export async function recoverAppDeliveries(
  deps: GlobalDependencies & AppLimits,
  clientId: string,
  appEndpointId: number,
  { since, business }: { since: string; business?: string },
) {
  const now = deps.clock();
  const shards = await shardsOf(deps, clientId, appEndpointId, business);
  if (business !== undefined) {
    const [copy] = await deps
      .onShard(shards[0] as ShardName)
      .db.select({ status: webhookEndpoints.status })
      .from(webhookEndpoints)
      .where(copies(appEndpointId, business));
    if (copy && copy.status !== "enabled") throw endpointDisabled();
  }
  const budgets = await takeAppRecover(deps, clientId, appEndpointId);
  const writes = copiesRecover({ appEndpoint: appEndpointId, business, ...recoverSince(since, now) });
  const queued = await Promise.all(
    shards.map(async (shard) => {
      const shardDeps = deps.onShard(shard);
      const answers = (await runStatements(shardDeps.db, writes)) as Array<Array<{ id: number }>>;
      const deliveryIds = answers.flat().map((row) => row.id);
      shardDeps.enqueue(deliveryIds);
      return deliveryIds.length;
    }),
  );
  return { queued: queued.reduce((sum, count) => sum + count, 0), budgets };
}
