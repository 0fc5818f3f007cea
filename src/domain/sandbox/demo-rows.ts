import type { SQL } from "drizzle-orm";
import type { SQLiteInsertValue } from "drizzle-orm/sqlite-core";
import type { bookings, knowledgeItems, orders } from "../../db/schema";
import { type EpochMs, HOUR_MS, iso } from "../../lib/time";
import {
  CLIENTS,
  DEMO_BOOKINGS,
  DEMO_KNOWLEDGE,
  DEMO_ORDERS,
  PRODUCTS,
  priceText,
  SERVICES,
  type Service,
} from "./demo-data";

/*
 * The demo data (src/domain/sandbox/demo-data.ts) as rows of one business, for a sandbox business's creation
 * (src/domain/sandbox/businesses.ts) and the local seed (scripts/seed.ts) alike: dates relative to `now` in the
 * business's time zone, prices in its currency.
 */

const DAY_MS = 86_400_000;

export type DemoBusiness = {
  businessId: string;
  /** Names the business in its demo links and conversation ids. */
  handle: string;
  currency: string;
  /** How a price is written before its amount: "€", "$". */
  symbol: string;
  timeZone: string;
  now: EpochMs;
  /**
   * The id of the n-th demo booking or order (n from 1): the core platform's ids, which the seed numbers itself and
   * a sandbox business draws from its shard's sandbox range (src/domain/sandbox/businesses.ts).
   */
  idOf: (table: "bookings" | "orders", n: number) => number | SQL;
};

/** `{name}` in a text replaced by vars[name]; an unknown name is an error of the data. */
export function fill(text: string, vars: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (!(name in vars)) throw new Error(`The demo data uses {${name}}, which is not given.`);
    return String(vars[name]);
  });
}

/** Today's date in `timeZone`, as the instant of its UTC midnight: what a booking's `date` counts days from. */
function localMidnight(now: EpochMs, timeZone: string): EpochMs {
  const format = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
  return Date.parse(`${format.format(now).slice(0, 10)}T00:00:00Z`);
}

const dateIn = (midnight: EpochMs, days: number) => iso(midnight + days * DAY_MS).slice(0, 10);

/** A booking's or order's own reference in links and payments: the business's handle and its number. */
const reference = (handle: string, n: number) => `${handle}-${String(n).padStart(4, "0")}`;

export function demoBookingRows(business: DemoBusiness): SQLiteInsertValue<typeof bookings>[] {
  const { businessId, handle, currency, symbol, now } = business;
  const midnight = localMidnight(now, business.timeZone);
  return DEMO_BOOKINGS.map((booking, i) => {
    const n = i + 1;
    const service: Service = SERVICES[booking.service];
    const client = CLIENTS[booking.client];
    const ref = reference(handle, n);
    // Only a booking still to come can be moved or cancelled by its client.
    const open = booking.status === "confirmed" || booking.status === "pending";
    const paid = booking.payment === "paid" ? service.price : booking.payment === "deposit_paid" ? 30 : 0;
    return {
      id: business.idOf("bookings", n),
      businessId,
      status: booking.status,
      date: dateIn(midnight, booking.day),
      time: booking.time,
      durationMinutes: service.minutes,
      serviceId: service.id,
      serviceName: service.name,
      servicePrice: priceText(service, symbol),
      clientName: client.name,
      clientEmail: client.email,
      clientPhone: client.phone,
      paymentStatus: booking.payment ?? "unpaid",
      paymentAmountPaid: paid,
      paymentAgreedAmount: booking.payment === "deposit_paid" ? service.price + 10 : null,
      paymentCurrency: currency,
      paymentReference: booking.payment ? `PAY-${ref}` : null,
      location: booking.location ?? null,
      notes: booking.notes ?? null,
      rescheduleCount: booking.movedFrom ? 1 : 0,
      originalDate: booking.movedFrom ? dateIn(midnight, booking.movedFrom.day) : null,
      originalTime: booking.movedFrom?.time ?? null,
      rescheduleLink: open ? `https://book.example/${handle}/bookings/${ref}/reschedule` : null,
      cancelLink: open ? `https://book.example/${handle}/bookings/${ref}/cancel` : null,
      conversationId: booking.conversation ? `conv_${ref}` : null,
      createdAt: iso(now - booking.bookedHoursAgo * HOUR_MS),
      updatedAt: iso(now),
    };
  });
}

export function demoOrderRows(business: DemoBusiness): SQLiteInsertValue<typeof orders>[] {
  const { businessId, handle, symbol, now } = business;
  const at = (hours: number | undefined) => (hours === undefined ? null : iso(now + hours * HOUR_MS));
  return DEMO_ORDERS.map((order, i) => {
    const n = i + 1;
    const items = Object.entries(order.items).map(([product, qty]) => {
      const item = PRODUCTS[product as keyof typeof PRODUCTS];
      return {
        service_id: item.service_id,
        name: fill(item.name, { symbol }),
        qty: qty ?? 0,
        unit_price: item.unit_price,
      };
    });
    const total = Math.round(items.reduce((sum, item) => sum + item.qty * item.unit_price * 100, 0)) / 100;
    const client = CLIENTS[order.client];
    const { delivery } = order;
    return {
      id: business.idOf("orders", n),
      businessId,
      status: order.status,
      items,
      total,
      payOnDelivery: order.payment === "unpaid",
      fulfillmentType: order.fulfillment ?? "pickup",
      deliveryAddress: delivery?.address ?? null,
      deliveryNotes: delivery?.notes ?? null,
      trackingNumber: delivery?.tracking ?? null,
      carrier: delivery?.carrier ?? null,
      readyAt: at(order.readyInHours),
      estimatedReadyAt: at(order.estimatedReadyInHours),
      trackingUrl: delivery ? `https://track.example/${handle}/${delivery.tracking}` : null,
      clientName: client.name,
      clientEmail: client.email,
      clientPhone: client.phone,
      paymentStatus: order.payment ?? "paid",
      paymentAmountPaid: order.payment ? 0 : total,
      notes: order.notes ?? null,
      conversationId: order.conversation ? `conv_${reference(handle, 100 + n)}` : null,
      createdAt: iso(now - order.orderedHoursAgo * HOUR_MS),
      updatedAt: iso(now),
    };
  });
}

/** The demo texts as pushed by one API key of the business (`apiKeyId`, or the statement that finds it). */
export function demoKnowledgeRows(business: {
  businessId: string;
  name: string;
  now: EpochMs;
  apiKeyId: number | SQL;
}): SQLiteInsertValue<typeof knowledgeItems>[] {
  return DEMO_KNOWLEDGE.map((item) => {
    const content = fill(item.content, { name: business.name });
    return {
      businessId: business.businessId,
      key: item.key,
      title: item.title,
      content,
      // Code points, as `chars` counts them (docs/guides/knowledge.md, Pushing a text).
      chars: [...content].length,
      apiKeyId: business.apiKeyId,
      oauthGrantId: null,
      createdAt: iso(business.now),
      updatedAt: iso(business.now),
    };
  });
}
