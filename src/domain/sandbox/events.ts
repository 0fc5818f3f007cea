import { and, asc, between, desc, eq, gte, inArray, max, notInArray } from "drizzle-orm";
import type { Read } from "../../db/reads";
import { bookings, ORDER_STATUSES, orders } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { invalid } from "../../lib/api-error";
import { randomToken } from "../../lib/secrets";
import { iso } from "../../lib/time";
import { EVENT_NAMES, type EventName } from "../../names-and-limits";
import type { BookingObject, ReportedBooking } from "../../schemas/booking";
import type { OrderObject, ReportedOrder } from "../../schemas/order";
import type { Business } from "../access/businesses";
import { businessOf, type CredentialSide, reachArgument, type SqlReach } from "../access/scope";
import { toBookingObject } from "../platform/bookings";
import { reportChange } from "../platform/changes";
import { toOrderObject } from "../platform/orders";
import type { EmittedEvent } from "../webhooks/outbox/write";
import { sampleEvent } from "../webhooks/samples";
import { newBooking, newOrder, orderMovedTo } from "./objects";
import { SANDBOX_IDS } from "./record-ids";

/*
 * `POST /sandbox/events` (docs/decisions.md, Sandbox operations): an event the core platform causes, caused on a
 * sandbox business through the service's own path, `reportChange`, as the core platform reports it. So the snapshot
 * changes in the same batch as the event is stored, and `GET /appointments/{id}` or `GET /orders/{id}` answer the
 * object the event carried.
 */

type OrderStatus = OrderObject["status"];

/** The order events after `order.created`, and the status each reports (src/domain/platform/changes.ts). */
const ORDER_MOVES = {
  "order.preparing": "preparing",
  "order.ready": "ready_for_pickup",
  "order.dispatched": "out_for_delivery",
  "order.fulfilled": "fulfilled",
  "order.cancelled": "cancelled",
} as const satisfies Partial<Record<EventName, OrderStatus>>;

/** The events nothing of the core platform causes, and where a sandbox gets each instead. */
const LIFECYCLE = "is sent when the owner switches it in the dashboard (or a PATCH switches it off)";
const ELSEWHERE: Partial<Record<EventName, string>> = {
  "intake.completed":
    "intake.completed comes from a customer's conversation: POST /sandbox/intakes/{id}/conversations.",
  ping: "ping is the Test button's event: send it with POST /webhooks/{id}/test.",
  "action.enabled": `action.enabled ${LIFECYCLE}; a sample comes from POST /webhooks/{id}/test with this event.`,
  "action.disabled": `action.disabled ${LIFECYCLE}; a sample comes from POST /webhooks/{id}/test with this event.`,
  "action.change_accepted":
    "action.change_accepted is sent when the owner accepts a change in the dashboard; a sample comes from POST /webhooks/{id}/test with this event, and POST /sandbox/actions/{id}/calls calls the action.",
  "intake.enabled": `intake.enabled ${LIFECYCLE}; a sample comes from POST /webhooks/{id}/test with this event.`,
  "intake.disabled": `intake.disabled ${LIFECYCLE}; a sample comes from POST /webhooks/{id}/test with this event.`,
  "app.connected":
    "app.connected is sent when an owner approves your app; a sample comes from POST /webhooks/{id}/test with this event.",
  "app.disconnected":
    "app.disconnected is sent when an owner disconnects your app; a sample comes from POST /webhooks/{id}/test with this event.",
};

/** Every event a sandbox business can be sent with `POST /sandbox/events`: those the core platform causes. */
export const PLATFORM_EVENTS = EVENT_NAMES.filter((event) => ELSEWHERE[event] === undefined);

/**
 * Ids of new bookings and orders: the core platform numbers its own, so a sandbox's are the service's, drawn from the
 * sandbox range as the demo data's are (`SANDBOX_IDS`, src/domain/sandbox/record-ids.ts):
 * past the highest so far, read in the credential's batch, by a random step of up to a million, so that two events
 * made at the same moment do not pick one id (docs/decisions.md, Sandbox operations).
 */
const MAX_STEP = 1_000_000;
const highestId = (table: typeof bookings | typeof orders) =>
  statement<{ first: number; last: number }>()((db, { first, last }) =>
    db
      .select({ top: max(table.id) })
      .from(table)
      .where(between(table.id, first, last)),
  );
const highestBooking = highestId(bookings);
const highestOrder = highestId(orders);
const stepped = (top: number | null | undefined, first: number) =>
  (top ?? first - 1) + 1 + ((crypto.getRandomValues(new Uint32Array(1))[0] ?? 0) % MAX_STEP);

/** The business's next upcoming booking still to happen (pending or confirmed, from today on). */
const upcomingBooking = statement<{ reach: ShapedArgument<SqlReach>; today: string }>()((db, { reach, today }) =>
  db
    .select()
    .from(bookings)
    .where(
      and(
        eq(bookings.businessId, businessOf(reach)),
        inArray(bookings.status, ["pending", "confirmed"]),
        gte(bookings.date, today),
      ),
    )
    .orderBy(asc(bookings.date), asc(bookings.time), asc(bookings.id))
    .limit(1),
);

/** The business's latest orders still open (neither fulfilled nor cancelled). */
const OPEN_ORDERS_READ = 20;
const openOrders = statement<{ reach: ShapedArgument<SqlReach> }>()((db, { reach }) =>
  db
    .select()
    .from(orders)
    .where(and(eq(orders.businessId, businessOf(reach)), notInArray(orders.status, ["fulfilled", "cancelled"])))
    .orderBy(desc(orders.id))
    .limit(OPEN_ORDERS_READ),
);

export type SandboxEventLoad = { upcoming?: BookingObject; open: OrderObject[]; bookingId: number; orderId: number };

/** What an event may change, read with the credential (one round trip; docs/architecture.md, Performance budget). */
export function sandboxEventRead(side: CredentialSide): Read<SandboxEventLoad> {
  const reach = reachArgument(side);
  const range = SANDBOX_IDS;
  return {
    statements: [
      upcomingBooking({ reach, today: iso(side.now).slice(0, 10) }),
      openOrders({ reach }),
      highestBooking(range),
      highestOrder(range),
    ],
    answer: ([upcoming, open, booking, order]) => ({
      upcoming: (upcoming as (typeof bookings.$inferSelect)[]).map(toBookingObject)[0],
      open: (open as (typeof orders.$inferSelect)[]).map(toOrderObject),
      bookingId: stepped((booking as { top: number | null }[])[0]?.top, range.first),
      orderId: stepped((order as { top: number | null }[])[0]?.top, range.first),
    }),
  };
}

/**
 * Causes `event` on the sandbox business as the core platform would: a new booking or order; a change of the next
 * upcoming booking, or a move of an open order whose status comes before the event's (a new one is reported first,
 * with its own `*.created`, when none fits); a payment of the upcoming booking; a lead or a review. Answers every
 * event emitted, in order. Round trips: those of `reportChange`, once, or twice when a booking or order is made first.
 */
export async function emitSandboxEvent(
  deps: Dependencies,
  business: Business,
  event: EventName,
  { upcoming, open, bookingId, orderId }: SandboxEventLoad,
): Promise<EmittedEvent[]> {
  const elsewhere = ELSEWHERE[event];
  if (elsewhere) throw invalid(`The core platform does not cause ${elsewhere}`, "event");
  const now = deps.clock();
  const report = (body: unknown) => reportChange(deps, business.id, body);
  /** A new booking, reported (`booking.created`), and the booking as reported. */
  const reportBooking = async (): Promise<[EmittedEvent[], ReportedBooking]> => {
    const booking = newBooking(bookingId, now, business.currency);
    return [await report({ booking }), booking];
  };

  if (event === "booking.created") return (await reportBooking())[0];
  if (event === "booking.rescheduled" || event === "booking.cancelled" || event === "booking.completed") {
    const [created, booking] = upcoming ? [[], upcoming] : await reportBooking();
    return [...created, ...(await report(bookingChange(event, booking)))];
  }
  if (event === "order.created") return report({ order: newOrder(orderId, now, "pickup") });
  if (event in ORDER_MOVES) {
    const status = ORDER_MOVES[event as keyof typeof ORDER_MOVES];
    // Ready for pickup is a pickup order's status, out for delivery a delivery order's.
    const fulfillment = status === "out_for_delivery" ? "delivery" : status === "ready_for_pickup" ? "pickup" : null;
    const fits = (order: OrderObject) =>
      ORDER_STATUSES.indexOf(order.status) < ORDER_STATUSES.indexOf(status) &&
      (fulfillment === null || order.fulfillment_type === fulfillment);
    const found = open.find(fits);
    const order: ReportedOrder = found ?? newOrder(orderId, now, fulfillment ?? "pickup");
    const created = found ? [] : await report({ order });
    const moved = orderMovedTo(order, status, now);
    const reason = status === "cancelled" ? { reason: "The customer cancelled: plans changed." } : {};
    return [...created, ...(await report({ order: moved, ...reason }))];
  }
  if (event === "payment.received") {
    const booking = upcoming ?? newBooking(bookingId, now, business.currency);
    const amount = booking.payment.agreed_amount ?? 35;
    const reference = randomToken("pay_", 8);
    const payment = { status: "paid", amount_paid: amount, currency: booking.payment.currency, reference };
    const paid = { ...booking, payment: { ...booking.payment, ...payment } };
    const data = { kind: "booking", amount, currency: payment.currency, reference, booking: paid };
    return report({ event, data });
  }
  if (event === "lead.created") {
    const { lead } = sampleEvent(event).data;
    return report({ event, data: { lead: { ...lead, id: randomToken("lead_", 8), created_at: iso(now) } } });
  }
  const { review } = sampleEvent("review.created").data;
  return report({ event, data: { review: { ...review, id: randomToken("rev_", 8), submitted_at: iso(now) } } });
}

/** A change of the booking as the core platform reports one: moved a day later, cancelled by the client, or done. */
function bookingChange(
  event: "booking.rescheduled" | "booking.cancelled" | "booking.completed",
  booking: ReportedBooking,
) {
  if (event === "booking.cancelled") {
    return { booking: { ...booking, status: "cancelled" }, cancelled_by: "client", reason: "Something came up." };
  }
  if (event === "booking.completed") return { booking: { ...booking, status: "completed" } };
  const next = new Date(`${booking.date}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return {
    booking: {
      ...booking,
      date: next.toISOString().slice(0, 10),
      time: booking.time === "14:00" ? "15:30" : "14:00",
      reschedule_count: booking.reschedule_count + 1,
      original_date: booking.original_date ?? booking.date,
      original_time: booking.original_time ?? booking.time,
    },
  };
}
