import { and, asc, desc, eq, gt, gte, inArray, lt, lte } from "drizzle-orm";
import { deliveryAttempts, events, webhookDeliveries } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import type { EpochMs } from "../../lib/time";
import { ATTEMPT_COLUMNS, type DeliveryStatus } from "./delivery-log";
import { keptSince } from "./event-log";

/*
 * The owner's delivery history of one endpoint (docs/decisions.md, The owner's dashboard): pages of 20, newest first,
 * keyset on the delivery id along the index `webhook_deliveries_endpoint` (endpoint_id, id), as the partner's
 * `GET /webhooks/{id}/deliveries`, and both ways (Older and Newer), with what only the owner's page shows: the
 * envelope, the answers' excerpts, and the test and redelivery marks. Scoped by the business alone: the owner sees
 * every side. The endpoint's 404 is `endpointForOwner`'s, read beside it.
 */

const OWNER_HISTORY_PAGE = 20;

/** Where a page starts: after `older` (its deliveries are older than that id), or before `newer`; the newest without. */
type HistoryCursor =
  | { older: number; newer?: never }
  | { newer: number; older?: never }
  | { older?: never; newer?: never };

export type OwnerAttempt = {
  attemptedAt: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  answerExcerpt: string | null;
};

export type OwnerDelivery = {
  id: number;
  event: string;
  status: DeliveryStatus;
  createdAt: string;
  /** The envelope as sent, pretty-printed. */
  payload: string;
  /** A test event: the partner's (`"test": true`) or the dashboard's `ping`. */
  test: boolean;
  /** Sent again outside the schedule (a Send again, a redeliver or a recover): owed now, or already attempted. */
  sentAgain: boolean;
  attempts: OwnerAttempt[];
};

export type OwnerHistory = { deliveries: OwnerDelivery[]; older?: number; newer?: number };

function pretty(envelope: string): { payload: string; test: boolean } {
  try {
    const parsed = JSON.parse(envelope) as { test?: unknown };
    return { payload: JSON.stringify(parsed, null, 2), test: parsed.test === true };
  } catch {
    return { payload: envelope, test: false };
  }
}

/**
 * One page, in one D1 batch: the page's deliveries (one more than the page, to know whether the same direction goes
 * on), their attempts, and whether one delivery lies on the other side of the cursor. A "newer" page is read oldest
 * first from its cursor, then turned round.
 */
export async function ownerDeliveryHistory(
  deps: Pick<Dependencies, "db">,
  businessId: string,
  endpointId: number,
  cursor: HistoryCursor,
  now: EpochMs,
): Promise<OwnerHistory> {
  const { db } = deps;
  const limit = OWNER_HISTORY_PAGE;
  const towardNewer = cursor.newer !== undefined;
  /** The cursor's delivery id, which the page starts beyond; none for the newest page. */
  const from = cursor.newer ?? cursor.older;
  const ofEndpoint = and(
    eq(webhookDeliveries.endpointId, endpointId),
    eq(webhookDeliveries.businessId, businessId),
    gte(webhookDeliveries.createdAt, keptSince(now)),
  );
  const pageWhere = and(
    ofEndpoint,
    from === undefined ? undefined : towardNewer ? gt(webhookDeliveries.id, from) : lt(webhookDeliveries.id, from),
  );
  const order = towardNewer ? asc(webhookDeliveries.id) : desc(webhookDeliveries.id);
  const pageIds = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(pageWhere)
    .orderBy(order)
    .limit(limit);
  // The other side of the cursor: the deliveries the previous page showed, if any are still kept. Only read when
  // there is a cursor: the newest page has no other side.
  const beyond =
    from === undefined
      ? []
      : [
          db
            .select({ id: webhookDeliveries.id })
            .from(webhookDeliveries)
            .where(and(ofEndpoint, towardNewer ? lte(webhookDeliveries.id, from) : gte(webhookDeliveries.id, from)))
            .limit(1),
        ];
  const [rows, attempts, other] = await db.batch([
    db
      .select({
        id: webhookDeliveries.id,
        event: events.type,
        envelope: events.envelope,
        status: webhookDeliveries.status,
        attemptCount: webhookDeliveries.attemptCount,
        extraAttemptAt: webhookDeliveries.extraAttemptAt,
        createdAt: webhookDeliveries.createdAt,
      })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(pageWhere)
      .orderBy(order)
      .limit(limit + 1),
    db
      // The partner's columns, and the start of the receiver's answer, which only the owner's page shows.
      .select({ ...ATTEMPT_COLUMNS, answerExcerpt: deliveryAttempts.answerExcerpt })
      .from(deliveryAttempts)
      .where(inArray(deliveryAttempts.deliveryId, pageIds))
      .orderBy(asc(deliveryAttempts.deliveryId), asc(deliveryAttempts.id)),
    ...beyond,
  ]);
  const otherSide = other !== undefined && other.length > 0;
  const more = rows.length > limit;
  const shown = rows.slice(0, limit);
  if (towardNewer) shown.reverse();
  const deliveries = shown.map(({ envelope, attemptCount, extraAttemptAt, ...row }) => {
    const own = attempts
      .filter((attempt) => attempt.deliveryId === row.id)
      .map(({ deliveryId: _, ...attempt }) => attempt);
    const { payload, test } = pretty(envelope);
    return {
      ...row,
      payload,
      test: test || row.event === "ping",
      // Scheduled attempts are counted on the row; any attempt beyond them was an extra one.
      sentAgain: extraAttemptAt !== null || own.length > attemptCount,
      attempts: own,
    };
  });
  const first = deliveries[0];
  const last = deliveries.at(-1);
  const hasOlder = towardNewer ? otherSide : more;
  const hasNewer = towardNewer ? more : otherSide;
  return {
    deliveries,
    // An empty page (its deliveries removed by the retention meanwhile) links back across its own cursor.
    older: hasOlder ? (last?.id ?? (from ?? 0) + 1) : undefined,
    newer: hasNewer ? (first?.id ?? (from ?? 0) - 1) : undefined,
  };
}
