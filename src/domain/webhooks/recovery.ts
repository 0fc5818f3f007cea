import { and, eq, gte, isNull, type SQL, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { webhookDeliveries } from "../../db/schema";
import { type Placeheld, runStatements, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { invalid } from "../../lib/api-error";
import { type EpochMs, iso } from "../../lib/time";
import type { Principal } from "../access/principals";
import { reachArgument, sideOf } from "../access/scope";
import { takeRecover } from "./endpoint-budgets";
import { KEPT_FOR_MS, keptSince } from "./event-log";
import { receivableDelivery } from "./intake-answers";
import { type EndpointArguments, sendableEndpointId } from "./sendable-endpoint";

/**
 * `since` is at most 30 days back (nothing older is kept) and not in the future (nothing has failed there yet)
 * (docs/webhooks.md, Deliveries, redelivery and recovery). Checked while the request is read, so the 400 comes before
 * any other check of the request.
 */
export function assertRecoverableSince(since: string, now: EpochMs): void {
  const at = Date.parse(since);
  if (at > now)
    throw invalid('The field "since" is in the future: it must be a time within the last 30 days.', "since");
  if (at < now - KEPT_FOR_MS) {
    throw invalid('The field "since" is more than 30 days ago: deliveries are kept 30 days.', "since");
  }
}

/** The arguments of a recover's updates besides the endpoints they are of. */
export type RecoverSince = { since: string; kept: string; now: string };

type RecoverArguments = EndpointArguments & RecoverSince;

/**
 * The two updates of a recover, the failed deliveries' then the pending ones', of the kept deliveries created since
 * `since` to the endpoints `endpoints` selects while they are enabled: one endpoint's (below), or an app endpoint's
 * copies (src/domain/webhooks/app-history.ts).
 */
export function recoverStatements<A extends RecoverSince>(
  endpoints: (db: Database, args: Placeheld<A>) => SQL | undefined,
) {
  // The placeholders of the times: `A` has their members, which TypeScript does not see through the generic.
  const timesOf = (args: Placeheld<A>) => args as unknown as Placeheld<RecoverSince>;
  const createdSince = (db: Database, args: Placeheld<A>) =>
    and(
      endpoints(db, args),
      gte(webhookDeliveries.createdAt, timesOf(args).since),
      gte(webhookDeliveries.createdAt, timesOf(args).kept),
    );

  /**
   * Every failed one owes one extra attempt from now (as a redelivery: attempts.ts), unless one is owed or under way
   * already, so that recovers at the same moment, or a recover after a redelivery, ask for nothing twice. A range of
   * the index `webhook_deliveries_endpoint_status` (endpoint_id, status, completed_at) per endpoint: a failed
   * delivery finished after it was created, so `completed_at >= since` holds for every one created since then.
   */
  const failedAsked = statement<A>()((db, args) =>
    db
      .update(webhookDeliveries)
      .set({ extraAttemptAt: sql`${timesOf(args).now}` })
      .where(
        and(
          createdSince(db, args),
          eq(webhookDeliveries.status, "failed"),
          gte(webhookDeliveries.completedAt, timesOf(args).since),
          isNull(webhookDeliveries.extraAttemptAt),
        ),
      )
      .returning({ id: webhookDeliveries.id }),
  );

  /**
   * Every pending one that has failed at least once has its next scheduled attempt now, and its schedule goes on from
   * there, counting it (attempts.ts: the delay after it is the one after its number). Only one not due yet: one due
   * is on its way already (its message, or the sweep's), and a second recover finds these due. Marked not enqueued,
   * as a new outbox row is, so that the sweep sends it a minute later if the enqueue after the answer fails; the
   * message of its old schedule then finds it not due, and is acked.
   */
  const pendingBroughtForward = statement<A>()((db, args) =>
    db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: sql`${timesOf(args).now}`, enqueuedAt: null })
      .where(
        and(
          createdSince(db, args),
          eq(webhookDeliveries.status, "pending"),
          gte(webhookDeliveries.attemptCount, 1),
          // `+` keeps SQLite on the endpoints' ranges of `webhook_deliveries_endpoint_status` (endpoint_id, status):
          // without it, it walks `webhook_deliveries_status_due`, every business's pending deliveries not yet due.
          sql`+${webhookDeliveries.nextAttemptAt} > ${timesOf(args).now}`,
        ),
      )
      .returning({ id: webhookDeliveries.id }),
  );
  return (args: A) => [failedAsked(args), pendingBroughtForward(args)];
}

/** The endpoint within reach and enabled, of events the partner could have received (intake-answers.ts). */
const endpointRecover = recoverStatements<RecoverArguments>((db, { reach, endpoint }) =>
  and(eq(webhookDeliveries.endpointId, sendableEndpointId(db, { reach, endpoint })), receivableDelivery(db, reach)),
);

/** The two updates of a recover, in the order of their answers: the failed deliveries', then the pending ones'. */
export function recoverWrites(principal: Principal, endpointId: number, since: string, now: EpochMs) {
  const args = { reach: reachArgument(sideOf(principal)), endpoint: endpointId, ...recoverSince(since, now) };
  return endpointRecover(args);
}

/** A recover's times: `since`, the retention's start and now. */
export const recoverSince = (since: string, now: EpochMs): RecoverSince => ({
  since,
  kept: keptSince(now),
  now: iso(now),
});

/**
 * `POST /webhooks/{id}/recover` (docs/webhooks.md, Deliveries, redelivery and recovery): the endpoint's budget (429),
 * then in ONE round trip of two updates (no list of ids to pass D1's 100 parameters), every delivery since `since`
 * not delivered is sent now (docs/decisions.md, Redeliver and recover). Answers their ids, oldest first, to enqueue
 * after the answer, and the budget left.
 */
export async function recoverDeliveries(
  deps: Dependencies,
  principal: Principal,
  endpointId: number,
  since: string,
  now: EpochMs = deps.clock(),
) {
  const budgets = await takeRecover(deps, principal.business.id, endpointId);
  const [failed, pending] = (await runStatements(deps.db, recoverWrites(principal, endpointId, since, now))) as Array<
    Array<{ id: number }>
  >;
  const deliveryIds = [...(failed ?? []), ...(pending ?? [])].map((row) => row.id).sort((a, b) => a - b);
  deps.enqueue(deliveryIds);
  return { deliveryIds, budgets };
}
