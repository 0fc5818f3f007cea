import { type EpochMs, iso } from "../../lib/time";
import type { ReportedBooking } from "../../schemas/booking";
import type { OrderObject, ReportedOrder } from "../../schemas/order";
import { SAMPLE_BASKET } from "../webhooks/samples";

/*
 * The bookings and orders a sandbox's events are about (src/domain/sandbox/events.ts), as the core platform reports
 * them: every member of the objects filled in (docs/guides/syncing.md) as a real business's would be, with invented
 * people and example.com addresses, as the samples of test events (src/domain/webhooks/samples.ts).
 */

const DAY_MS = 86_400_000;

/** A new confirmed booking, the day after tomorrow at 10:30, paid on the day; `currency` is the business's. */
export function newBooking(id: number, now: EpochMs, currency: string): ReportedBooking {
  return {
    id,
    status: "confirmed",
    date: iso(now + 2 * DAY_MS).slice(0, 10),
    time: "10:30",
    duration_minutes: 45,
    service: { id: "svc_haircut", name: "Haircut", price: `35 ${currency}` },
    client: { name: "Noor Haddad", email: "noor@example.com", phone: "+31612345678" },
    payment: { status: "unpaid", amount_paid: 0, agreed_amount: 35, currency, reference: null },
    location: null,
    notes: "First visit",
    reschedule_count: 0,
    original_date: null,
    original_time: null,
    links: {
      reschedule: `https://example.com/bookings/${id}/reschedule`,
      cancel: `https://example.com/bookings/${id}/cancel`,
    },
    conversation_id: null,
    created_at: iso(now),
  };
}

/** A new pending order of two items, for pickup or delivery, ready in an hour. */
export function newOrder(id: number, now: EpochMs, fulfillment: ReportedOrder["fulfillment_type"]): ReportedOrder {
  const delivery = fulfillment === "delivery";
  return {
    id,
    status: "pending",
    ...SAMPLE_BASKET,
    fulfillment_type: fulfillment,
    delivery_address: delivery ? "Prinsengracht 263, 1016 GV Amsterdam" : null,
    delivery_notes: delivery ? "Ring twice" : null,
    tracking_number: null,
    carrier: null,
    ready_at: null,
    estimated_ready_at: iso(now + 3_600_000),
    tracking_url: `https://example.com/orders/${id}`,
    notes: null,
    conversation_id: null,
    created_at: iso(now),
  };
}

/** The order moved to `status` as the core platform reports the move: ready now, or handed to a carrier. */
export function orderMovedTo(order: ReportedOrder, status: OrderObject["status"], now: EpochMs): ReportedOrder {
  const ready = status === "ready_for_pickup" || (status === "fulfilled" && order.fulfillment_type === "pickup");
  const dispatched =
    status === "out_for_delivery" ? { tracking_number: "3SXYZ0012345678", carrier: "PostNL" } : undefined;
  return { ...order, status, ...(ready ? { ready_at: order.ready_at ?? iso(now) } : {}), ...dispatched };
}
