import { and, eq, sql } from "drizzle-orm";
import { selectedRowsIds } from "../../db/ids";
import { deliveryAttempts, webhookDeliveries } from "../../db/schema";
import { runStatements, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { iso } from "../../lib/time";
import type { ClaimedDelivery } from "./delivery-claim";
import { healthRecords } from "./health";

// The record and retry steps of the delivery pipeline (src/domain/webhooks/README.md): the retry schedule, and what
// each attempt of a queue batch did to its delivery. Which deliveries are attempted is claimed in delivery-claim.ts.

/**
 * Retries after 1, 5, 30, 120 and 720 minutes, six attempts in all (docs/guides/webhooks.md, Answering, retries and the
 * schedule): the delay after failed attempt n is RETRY_DELAYS_SECONDS[n - 1]; 43,200 s is Cloudflare Queues' largest.
 */
export const RETRY_DELAYS_SECONDS = [60, 300, 1800, 7200, 43_200] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;

/** What an attempt did; `excerpt`: the start of the receiver's answer (src/lib/outbound.ts, `excerptOf`), or null. */
export type AttemptOutcome = {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  excerpt: string | null;
};

/** One attempt as the consumer made it: the delivery it claimed, when it sent it, and what came back. */
export type Attempt = { delivery: ClaimedDelivery; attemptedAt: number; outcome: AttemptOutcome };

/**
 * The delay before the attempt after this one, or undefined when this one finishes the delivery, or is an extra one:
 * the schedule's own message carries the schedule, so the extra attempt's message is acked whatever its outcome.
 */
function retryDelayAfter({ delivery, outcome }: Attempt): number | undefined {
  if (delivery.kind === "extra") return undefined;
  const attemptCount = delivery.attemptCount + 1;
  return outcome.ok || attemptCount >= MAX_ATTEMPTS ? undefined : RETRY_DELAYS_SECONDS[attemptCount - 1];
}

/**
 * Records every attempt of a queue batch in ONE D1 batch, one transaction (docs/webhooks.md, How delivery works
 * inside): 2xx → delivered; an earlier failure → pending, due after the next delay; the sixth → failed. An extra
 * attempt moves only its own debt (a 2xx delivers; a failure leaves the delivery as it was). The batch keeps the
 * endpoints' health too (health.ts). Answers each delivery's next delay, or undefined when finished or extra.
 */
export async function recordAttempts(deps: Dependencies, attempts: Attempt[]): Promise<Array<number | undefined>> {
  const retryDelays = attempts.map(retryDelayAfter);
  const statements = attempts.flatMap((attempt, i) => {
    const { delivery, outcome, attemptedAt } = attempt;
    const retryInSeconds = retryDelays[i];
    const finishedAt = attemptedAt + outcome.durationMs;
    const record = attemptRecord({
      delivery: delivery.id,
      attemptedAt: iso(attemptedAt),
      statusCode: outcome.statusCode,
      error: outcome.error,
      durationMs: outcome.durationMs,
      answerExcerpt: outcome.excerpt,
    });
    if (delivery.kind === "extra") {
      return [
        record,
        extraAttemptRecorded({
          delivery: delivery.id,
          delivered: outcome.ok ? 1 : 0,
          finishedAt: iso(finishedAt),
          lease: delivery.lease,
        }),
      ];
    }
    return [
      record,
      deliveryMovedOn({
        delivery: delivery.id,
        attemptCount: delivery.attemptCount + 1,
        status: outcome.ok ? "delivered" : retryInSeconds === undefined ? "failed" : "pending",
        nextAttemptAt: iso(finishedAt + (retryInSeconds ?? 0) * 1000),
        completedAt: retryInSeconds === undefined ? iso(finishedAt) : null,
      }),
    ];
  });
  await runStatements(deps.db, [...statements, ...healthRecords(attempts)]);
  return retryDelays;
}

/**
 * One attempt's row, written only while the delivery exists: one deleted with its endpoint during the send would
 * otherwise fail the foreign key, and with it the records of the whole batch. Rendered once (src/db/statements.ts),
 * not once per attempt, which for a batch of 100 attempts would build 200 statements' SQL. Binds 6 parameters.
 */
const attemptRecord = statement<{
  delivery: number;
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  answerExcerpt: string | null;
}>()((db, { delivery, attemptedAt, statusCode, error, durationMs, answerExcerpt }) =>
  db.insert(deliveryAttempts).select(
    db
      .select({
        // Every column, in the table's order (drizzle's rule for an insert from a select); the shard numbers the row.
        id: sql<number>`${selectedRowsIds("delivery_attempts")}`.as("id"),
        deliveryId: webhookDeliveries.id,
        attemptedAt: sql<string>`${attemptedAt}`.as("attempted_at"),
        statusCode: sql<number | null>`${statusCode}`.as("status_code"),
        error: sql<string | null>`${error}`.as("error"),
        durationMs: sql<number>`${durationMs}`.as("duration_ms"),
        answerExcerpt: sql<string | null>`${answerExcerpt}`.as("answer_excerpt"),
      })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, delivery)),
  ),
);

/**
 * The delivery after a scheduled attempt: its count, its state, when it is due next, and its lease given back; only
 * while it is pending, as an extra attempt made at the same time may have delivered it.
 */
const deliveryMovedOn = statement<{
  delivery: number;
  attemptCount: number;
  status: "delivered" | "failed" | "pending";
  nextAttemptAt: string;
  completedAt: string | null;
}>()((db, { delivery, attemptCount, status, nextAttemptAt, completedAt }) =>
  db
    .update(webhookDeliveries)
    .set({
      attemptCount: sql`${attemptCount}`,
      status: sql`${status}`,
      nextAttemptAt: sql`${nextAttemptAt}`,
      completedAt: sql`${completedAt}`,
      leaseUntil: null,
    })
    .where(and(eq(webhookDeliveries.id, delivery), eq(webhookDeliveries.status, "pending"))),
);

/**
 * The delivery after an extra attempt (SQLite computes every SET from the row before the update): delivered on a
 * 2xx, finished then unless it already was; the debt cleared only while `extra_attempt_at` is still this attempt's
 * lease, so that one asked for again meanwhile is still owed. The count, the schedule and the scheduled attempt's
 * lease are left alone.
 */
const extraAttemptRecorded = statement<{ delivery: number; delivered: number; finishedAt: string; lease: string }>()(
  (db, { delivery, delivered, finishedAt, lease }) =>
    db
      .update(webhookDeliveries)
      .set({
        status: sql`case when ${delivered} = 1 then 'delivered' else ${webhookDeliveries.status} end`,
        completedAt: sql`case when ${delivered} = 1 and ${webhookDeliveries.status} <> 'delivered' then ${finishedAt} else ${webhookDeliveries.completedAt} end`,
        extraAttemptAt: sql`case when ${webhookDeliveries.extraAttemptAt} = ${lease} then null else ${webhookDeliveries.extraAttemptAt} end`,
      })
      .where(eq(webhookDeliveries.id, delivery)),
);
