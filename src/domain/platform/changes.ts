import { isGuardAbort } from "../../db/d1-failures";
import { nothingMore, read } from "../../db/reads";
import { bookings, orders } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { invalid } from "../../lib/api-error";
import { randomToken } from "../../lib/secrets";
import { iso } from "../../lib/time";
import { parseOrThrow } from "../../lib/validation";
import type { EventName } from "../../names-and-limits";
import type { BookingObject, ReportedBooking } from "../../schemas/booking";
import type { OrderObject, ReportedOrder } from "../../schemas/order";
import {
  BookingChange,
  type BookingChange as BookingChangeInput,
  OrderChange,
  type OrderChange as OrderChangeInput,
  OTHER_CHANGES,
} from "../../schemas/platform-changes";
import { placedHere } from "../access/runtime-shard";
import { readWithBusiness } from "../webhooks/lifecycle";
import { type EmittedEvent, type EventDraft, writeEvents } from "../webhooks/outbox/write";
import { toBookingObject, toBookingRow } from "./bookings";
import { toOrderObject, toOrderRow } from "./orders";
import { type SnapshotStatements, snapshotStatements } from "./snapshot-statements";

/**
 * Which change of a booking emits which event (docs/decisions.md, Decisions the design made where the contract is
 * silent): created → booking.created; date or time changed → booking.rescheduled; cancelled → booking.cancelled;
 * no_show → booking.cancelled with action "no_show"; completed → booking.completed. Nothing else emits (a changed note
 * only updates the snapshot). `booking` is the snapshot as stored by the change, with its `updated_at`, so that an
 * event carries the object a read answers.
 */
export function bookingEvents(
  previous: BookingObject | undefined,
  booking: BookingObject,
  change: BookingChangeInput,
): EventDraft[] {
  if (!previous) return [{ event: "booking.created", data: { booking } }];
  const drafts: EventDraft[] = [];
  if (previous.date !== booking.date || previous.time !== booking.time) {
    drafts.push({
      event: "booking.rescheduled",
      data: { booking, previous: { date: previous.date, time: previous.time } },
    });
  }
  if (previous.status === booking.status) return drafts;
  const reason = change.reason ?? null;
  if (booking.status === "cancelled") {
    if (!change.cancelled_by)
      throw invalid(
        'The field "cancelled_by" is required when a booking is cancelled.',
        "cancelled_by",
        "parameter_missing",
      );
    drafts.push({ event: "booking.cancelled", data: { booking, cancelled_by: change.cancelled_by, reason } });
  } else if (booking.status === "no_show") {
    drafts.push({ event: "booking.cancelled", data: { booking, action: "no_show", reason } });
  } else if (booking.status === "completed") {
    const completedBy = change.completed_by ? { completed_by: change.completed_by } : {};
    drafts.push({ event: "booking.completed", data: { booking, ...completedBy } });
  }
  return drafts;
}

/** An order's events after `order.created`, one per status it moves to. */
type OrderStatusEvent = Extract<
  EventName,
  "order.preparing" | "order.ready" | "order.dispatched" | "order.fulfilled" | "order.cancelled"
>;

/** The same for orders (docs/decisions.md, Decisions the design made where the contract is silent). */
const ORDER_STATUS_EVENTS: Partial<Record<OrderObject["status"], OrderStatusEvent>> = {
  preparing: "order.preparing",
  ready_for_pickup: "order.ready",
  out_for_delivery: "order.dispatched",
  fulfilled: "order.fulfilled",
  cancelled: "order.cancelled",
};

export function orderEvents(
  previous: OrderObject | undefined,
  order: OrderObject,
  change: OrderChangeInput,
): EventDraft[] {
  if (!previous) return [{ event: "order.created", data: { order } }];
  const event = previous.status === order.status ? undefined : ORDER_STATUS_EVENTS[order.status];
  if (!event) return [];
  if (event === "order.cancelled") return [{ event, data: { order, reason: change.reason ?? null } }];
  return [{ event, data: { order } }];
}

/**
 * A snapshot kind: where it is stored, how it maps to the partner's object (`Reported`, as the core platform reports
 * it; `Object`, as stored, with the service's `updated_at`), and which events a change of it emits.
 */
type SnapshotKind<Reported extends { id: number }, Object extends Reported & { updated_at: string }, Change> = {
  name: string;
  /** The statements of its table (snapshot-statements.ts). */
  statements: SnapshotStatements;
  toObject: (row: never) => Object;
  toRow: (
    businessId: string,
    object: Reported,
    updatedAt: string,
  ) => Omit<typeof bookings.$inferInsert | typeof orders.$inferInsert, "reportToken">;
  events: (previous: Object | undefined, current: Object, change: Change) => EventDraft[];
};

const BOOKINGS: SnapshotKind<ReportedBooking, BookingObject, BookingChangeInput> = {
  name: "booking",
  statements: snapshotStatements(bookings),
  toObject: toBookingObject,
  toRow: toBookingRow,
  events: bookingEvents,
};

const ORDERS: SnapshotKind<ReportedOrder, OrderObject, OrderChangeInput> = {
  name: "order",
  statements: snapshotStatements(orders),
  toObject: toOrderObject,
  toRow: toOrderRow,
  events: orderEvents,
};

/** Concurrent reports of one object are rare; each retry reads the snapshot the other report wrote. */
const MAX_REPORT_ATTEMPTS = 5;

/** An object without the service's `updated_at`: what a report is compared by (a report may carry one; it is ignored). */
const withoutStamp = <T extends { updated_at?: string }>({ updated_at: _, ...members }: T) => members;

/**
 * Applies a report of a booking or order: one round trip reads the business, the snapshot and the endpoints; one
 * batch writes the new snapshot, its events (and `extra` ones, such as the payment that carried it) and deliveries,
 * guarded by the snapshot read, so of two racing reports the loser reads again and emits only what is left. The
 * snapshot is stamped `updated_at` and events carry it as stored (docs/decisions.md, Paging and sync). Every
 * statement is rendered once per shape: a report is the busiest write the service takes (docs/performance.md).
 */
async function applySnapshotChange<
  Reported extends { id: number; updated_at?: string },
  Object extends Reported & { updated_at: string },
  Change,
>(
  deps: Dependencies,
  businessId: string,
  kind: SnapshotKind<Reported, Object, Change>,
  object: Reported,
  change: Change,
  extra: (current: Object) => EventDraft[] = () => [],
): Promise<EmittedEvent[]> {
  const { statements } = kind;
  const key = { business: businessId, id: object.id };
  for (let attempt = 1; ; attempt++) {
    const found = await readWithBusiness(
      deps,
      businessId,
      read(statements.stored(key), (rows) => rows[0]),
    );
    const reporting = placedHere(found.business);
    const stored = found.record;
    const previous = stored ? kind.toObject(stored as never) : undefined;
    const unchanged =
      previous !== undefined && JSON.stringify(withoutStamp(previous)) === JSON.stringify(withoutStamp(object));
    const row = { ...kind.toRow(businessId, object, iso(deps.clock())), reportToken: randomToken("rpt_", 12) };
    const current = unchanged ? previous : kind.toObject(row as never);
    const drafts = [...(unchanged ? [] : kind.events(previous, current, change)), ...extra(current)];
    if (drafts.length === 0 && unchanged) return [];
    const stillAsRead = statements.asRead({ ...key, token: stored ? stored.reportToken : undefined });
    const writes = unchanged ? [stillAsRead] : [stillAsRead, statements.upsert(row)];
    try {
      const written = await writeEvents(deps, reporting, found.endpoints, drafts, writes);
      deps.enqueue(written.deliveryIds);
      return written.emitted;
    } catch (error) {
      if (!isGuardAbort(error) || attempt === MAX_REPORT_ATTEMPTS) throw error;
    }
  }
}

async function emitOther(deps: Dependencies, businessId: string, body: { event: string }) {
  const schema = OTHER_CHANGES[body.event as keyof typeof OTHER_CHANGES];
  const change = parseOrThrow(schema, body, "json");
  // A payment carries the booking or order as it now is: that is a report of it too (its snapshot and events), and
  // the payment's event carries the object as stored by it.
  if (change.event === "payment.received") {
    const { event, data } = change;
    const payment = { kind: data.kind, amount: data.amount, currency: data.currency, reference: data.reference };
    if (data.booking) {
      const paid = (booking: BookingObject): EventDraft[] => [{ event, data: { ...payment, booking } }];
      return applySnapshotChange(deps, businessId, BOOKINGS, data.booking, { booking: data.booking }, paid);
    }
    if (!data.order) throw invalid('The field "data" must carry the booking or the order that its kind names.', "data");
    const paid = (order: OrderObject): EventDraft[] => [{ event, data: { ...payment, order } }];
    return applySnapshotChange(deps, businessId, ORDERS, data.order, { order: data.order }, paid);
  }
  // `{ event, data }`, parsed by the event's own schema, is a draft of that event.
  const draft: EventDraft = change;
  const { business, endpoints } = await readWithBusiness(deps, businessId, nothingMore);
  const written = await writeEvents(deps, placedHere(business), endpoints, [draft]);
  deps.enqueue(written.deliveryIds);
  return written.emitted;
}

/**
 * The core platform reports a change (`POST /internal/v1/businesses/{id}/events`; docs/decisions.md, Events from the
 * core platform): the booking or order snapshot that `GET /appointments` and `GET /orders` read is stored, and the
 * event the change means is emitted, in the same D1 batch. Answers the events emitted (none when nothing changed).
 */
export async function reportChange(deps: Dependencies, businessId: string, body: unknown): Promise<EmittedEvent[]> {
  if (typeof body === "object" && body !== null) {
    if ("booking" in body) {
      const change = parseOrThrow(BookingChange, body, "json");
      return applySnapshotChange(deps, businessId, BOOKINGS, change.booking, change);
    }
    if ("order" in body) {
      const change = parseOrThrow(OrderChange, body, "json");
      return applySnapshotChange(deps, businessId, ORDERS, change.order, change);
    }
    if ("event" in body && typeof body.event === "string" && body.event in OTHER_CHANGES) {
      return emitOther(deps, businessId, body as { event: string });
    }
  }
  throw invalid(
    `The request body must carry a "booking", an "order", or an "event" that is one of ${Object.keys(OTHER_CHANGES).join(", ")}.`,
  );
}
