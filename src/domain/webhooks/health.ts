import { and, eq, gte, inArray, lte, type Placeholder, sql } from "drizzle-orm";
import { webhookDeliveries, webhookEndpoints } from "../../db/schema";
import { type Bound, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { iso } from "../../lib/time";
import { reached, type SqlReach } from "../access/scope";
import { notEndedCopy } from "./app-endpoints";
import { endpointNotFound, toEndpointObject } from "./endpoints";

/** What endpoint health reads of an attempt (attempts.ts makes them): whose endpoint, when, and how it ended. */
type Attempt = {
  delivery: { endpointId: number };
  attemptedAt: number;
  outcome: { ok: boolean; statusCode: number | null; durationMs: number };
};

/*
 * Endpoint health (docs/webhooks.md, Endpoint health): an endpoint is disabled when it answers 410 Gone, or when every
 * delivery attempt to it for 3 days has failed (at least 10 failed deliveries and none delivered in that time). A
 * disabled endpoint gets no new deliveries (`writeEvents` inserts none for it); its pending ones finish their schedule
 * and its events stay listable, until its partner or the owner enables it again.
 */

/** How long every attempt must have failed before the endpoint is disabled. */
export const FAILING_FOR_MS = 3 * 24 * 3_600_000;
/** How many deliveries must have failed (all six attempts) in that time: a quiet endpoint is not judged on one. */
export const FAILED_DELIVERIES_TO_DISABLE = 10;
/** RFC 9110 §15.5.11: the resource is gone for good, and the sender should stop. */
const GONE = 410;

/**
 * The endpoints of a queue batch's attempts as ONE bound value, a JSON array of `[endpoint id, time]` pairs, one per
 * endpoint with the latest (or earliest) time its attempts finished, so that a statement has one shape for any
 * number of them (src/db/statements.ts). The endpoint comes with the claimed delivery, not from a join of the pairs
 * with the deliveries, which would make SQLite walk the whole deliveries table per endpoint.
 */
function pairsOf(attempts: Attempt[], pick: "latest" | "earliest"): string {
  const times = new Map<number, string>();
  for (const { delivery, attemptedAt, outcome } of attempts) {
    const time = iso(attemptedAt + outcome.durationMs);
    const known = times.get(delivery.endpointId);
    if (known === undefined || (pick === "latest" ? time > known : time < known)) times.set(delivery.endpointId, time);
  }
  return JSON.stringify([...times]);
}

/** The endpoints of the pairs: each found by its primary key. */
const reachedByPairs = (pairs: Placeholder) =>
  inArray(webhookEndpoints.id, sql`(select json_extract(value, '$[0]') from json_each(${pairs}))`);

/** The time of the pair of the endpoint the statement updates. */
const timeOfPairs = (pairs: Placeholder) =>
  sql`(select json_extract(value, '$[1]') from json_each(${pairs}) where json_extract(value, '$[0]') = ${webhookEndpoints.id})`;

/** A 2xx: when the endpoint last answered one, never moved back by a batch recorded late with an older attempt. */
const successesRecorded = statement<{ successes: string }>()((db, { successes }) =>
  db
    .update(webhookEndpoints)
    .set({
      lastSuccessAt: sql`max(coalesce(${webhookEndpoints.lastSuccessAt}, ''), ${timeOfPairs(successes)})`,
    })
    .where(reachedByPairs(successes)),
);

/** A 410 Gone disables the endpoint at once. */
const goneDisabled = statement<{ gone: string }>()((db, { gone }) =>
  db
    .update(webhookEndpoints)
    .set({
      status: "disabled",
      disabledReason: sql`${"The endpoint answered 410 Gone at "} || ${timeOfPairs(gone)} || ${", so it gets no new deliveries until it is enabled again."}`,
    })
    .where(and(eq(webhookEndpoints.status, "enabled"), reachedByPairs(gone))),
);

/**
 * A failure disables its endpoint when nothing has succeeded since `since` (its last success, or its creation, is
 * at least 3 days old) and at least 10 of its deliveries failed since then. The count is a range of the index
 * (endpoint_id, status, completed_at) cut at 10 entries: however long the endpoint's history, at most 10 are read.
 */
const failingDisabled = statement<{ failed: string; since: string }>()((db, { failed, since }) => {
  const succeededLast = sql`coalesce(${webhookEndpoints.lastSuccessAt}, ${webhookEndpoints.createdAt})`;
  const recentFailures = db
    .select({ one: sql`1` })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.endpointId, webhookEndpoints.id),
        eq(webhookDeliveries.status, "failed"),
        gte(webhookDeliveries.completedAt, since),
      ),
    )
    .limit(FAILED_DELIVERIES_TO_DISABLE);
  return db
    .update(webhookEndpoints)
    .set({
      status: "disabled",
      disabledReason: sql`${"Every delivery to the endpoint failed for 3 days (none succeeded since "} || ${succeededLast} || ${`, and at least ${FAILED_DELIVERIES_TO_DISABLE} failed), so it gets no new deliveries until it is enabled again.`}`,
    })
    .where(
      and(
        eq(webhookEndpoints.status, "enabled"),
        reachedByPairs(failed),
        lte(succeededLast, since),
        sql`(select count(*) from (${recentFailures})) >= ${FAILED_DELIVERIES_TO_DISABLE}`,
      ),
    );
});

/**
 * What a queue batch's attempts say about their endpoints, as statements of the batch that records them (after the
 * deliveries' own updates, so that a delivery this batch failed counts): when each last succeeded, which answered
 * 410 Gone, and whether those that failed have failed long enough to be disabled. At most three statements,
 * whatever the batch's size; none for an outcome the batch does not have.
 */
export function healthRecords(attempts: Attempt[]): Bound<unknown>[] {
  const successes = attempts.filter(({ outcome }) => outcome.ok);
  const failures = attempts.filter(({ outcome }) => !outcome.ok);
  const gone = failures.filter(({ outcome }) => outcome.statusCode === GONE);
  const statements: Bound<unknown>[] = [];
  if (successes.length > 0) statements.push(successesRecorded({ successes: pairsOf(successes, "latest") }));
  if (gone.length > 0) statements.push(goneDisabled({ gone: pairsOf(gone, "earliest") }));
  if (failures.length > 0) {
    const now = Math.max(...failures.map(({ attemptedAt, outcome }) => attemptedAt + outcome.durationMs));
    statements.push(failingDisabled({ failed: pairsOf(failures, "latest"), since: iso(now - FAILING_FOR_MS) }));
  }
  return statements;
}

/**
 * `POST /webhooks/{id}/enable`: the endpoint receives new events again (the partner's `recover` fills the gap). The
 * failures that disabled it are not forgotten: one still failing is disabled again by its next failed attempt, and
 * its first success clears it. Another side's endpoint is the same 404 as a missing one. One statement.
 */
export async function enableEndpoint(deps: Dependencies, reach: SqlReach, id: number) {
  const [endpoint] = await deps.db
    .update(webhookEndpoints)
    .set({ status: "enabled", disabledReason: null })
    .where(and(eq(webhookEndpoints.id, id), reached(webhookEndpoints, reach), notEndedCopy))
    .returning();
  if (!endpoint) throw endpointNotFound();
  return toEndpointObject(endpoint);
}
