import { and, eq, gte, min, notInArray } from "drizzle-orm";
import type { Database } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { runStatements, statement } from "../../db/statements";
import type { BusinessLimits } from "../../durable-objects/business-limits";
import { invalid } from "../../lib/errors";
import { type EpochMs, iso } from "../../lib/time";
import type { Principal } from "../access/principals";
import { reachArgument, scopeOf } from "../access/scope";
import { takeRecover } from "./endpoint-budgets";
import { KEPT_FOR_MS, keptSince } from "./event-log";
import { copiesOf } from "./redelivery";
import type { EndpointArguments } from "./sendable-endpoint";

/**
 * DESIGN.md, Beyond the spec: `since` "at most 30 days back" (nothing older is kept), and not in the future (nothing
 * has failed there yet). Checked while the request is read, so the 400 comes before any other check of the request.
 */
export function assertRecoverableSince(since: string, now: EpochMs = Date.now()): void {
  const at = Date.parse(since);
  if (at > now) throw invalid('The field "since" is in the future: it must be a time within the last 30 days.');
  if (at < now - KEPT_FOR_MS) {
    throw invalid('The field "since" is more than 30 days ago: deliveries are kept 30 days.');
  }
}

/**
 * One new delivery for every event whose delivery to the endpoint failed since `since` (by when it failed: the index
 * `webhook_deliveries_endpoint_status` (endpoint_id, status, completed_at)), in ONE statement: an INSERT ... SELECT
 * binds the same 13 parameters for any number of deliveries, where a list of their ids would pass D1's 100. An event
 * is sent once however many of its deliveries failed (the original, an earlier recover's), and not at all while one
 * of its deliveries to the endpoint is pending or has been delivered since then: a second recover, or a recover after
 * a redelivery, sends nothing twice. Numbered oldest first, the order in which they were missed.
 */
const failedSince = statement<EndpointArguments & { since: string; kept: string; now: string }>()(
  (db, { reach, endpoint, since, kept, now }) => {
    // Two ranges of the same index, rather than one OR that SQLite would answer by reading every delivery of the
    // endpoint.
    const eventsOf = (status: "pending" | "delivered") =>
      db
        .select({ eventId: webhookDeliveries.eventId })
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.endpointId, endpoint),
            eq(webhookDeliveries.status, status),
            status === "delivered" ? gte(webhookDeliveries.completedAt, since) : undefined,
          ),
        );
    const settled = eventsOf("pending").unionAll(eventsOf("delivered"));
    return db
      .insert(webhookDeliveries)
      .select(
        copiesOf(
          db,
          { reach, endpoint, kept, now },
          eq(webhookDeliveries.status, "failed"),
          gte(webhookDeliveries.completedAt, since),
          notInArray(webhookDeliveries.eventId, settled),
        )
          .groupBy(webhookDeliveries.eventId)
          .orderBy(min(webhookDeliveries.id)),
      )
      .returning({ id: webhookDeliveries.id });
  },
);

/**
 * `POST /webhooks/{id}/recover` (DESIGN.md, Beyond the spec), once the endpoint was read with the credential: the
 * endpoint's budget (429), then the new deliveries, written in one round trip. Answers their ids, for the queue, and
 * the budget left.
 */
export async function recoverDeliveries(
  limits: DurableObjectNamespace<BusinessLimits>,
  db: Database,
  principal: Principal,
  endpointId: number,
  since: string,
  now: EpochMs = Date.now(),
) {
  const budget = await takeRecover(limits, principal.business.id, endpointId);
  const [rows] = (await runStatements(db, [
    failedSince({
      reach: reachArgument(scopeOf(principal)),
      endpoint: endpointId,
      since,
      kept: keptSince(now),
      now: iso(now),
    }),
  ])) as [Array<{ id: number }>];
  return { deliveryIds: rows.map((row) => row.id), budget };
}
