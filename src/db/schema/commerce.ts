import { index, integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { isoNow } from "../../lib/time";
import { businesses } from "./businesses";
import { createdAt, flag, timestamp } from "./columns";

/**
 * Which report wrote the snapshot: a report applies only if the snapshot is still the one it read (the
 * `snapshot_guard` of migrations/0001_snapshot_guard.sql), so concurrent reports of one booking never emit an event
 * twice.
 */
const snapshotColumns = () => ({
  reportToken: text("report_token"),
  /**
   * When the service stored the snapshot's latest change (`deps.clock`, src/domain/platform/changes.ts): what
   * `updated_since` filters on (docs/decisions.md, Paging and sync). Every write of the service sets it; the default
   * is for rows inserted by other means (fixtures, the seed), which are new as they are inserted.
   */
  updatedAt: timestamp("updated_at").notNull().$defaultFn(isoNow),
});

/** The booking statuses the core platform sends, a closed list (docs/decisions.md, Reading bookings and orders). */
export const BOOKING_STATUSES = ["pending", "confirmed", "completed", "cancelled", "no_show"] as const;

/** The seven order statuses (docs/guides/syncing.md, Booking and order objects). */
export const ORDER_STATUSES = [
  "pending",
  "confirmed",
  "preparing",
  "ready_for_pickup",
  "out_for_delivery",
  "fulfilled",
  "cancelled",
] as const;

export const FULFILLMENT_TYPES = ["pickup", "delivery"] as const;

/**
 * Snapshots of the core platform's bookings, written by event ingestion and read by `GET /appointments`.
 * `id` is the core platform's booking id, unique per business: the key is (business, id), so two businesses that
 * carry the same number never meet in one table, whichever shards they move between (docs/scaling.md, Ids unique
 * across shards). Columns mirror the partner contract's Booking object, nested objects flattened.
 */
export const bookings = sqliteTable(
  "bookings",
  {
    id: integer("id").notNull(),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    status: text("status", { enum: BOOKING_STATUSES }).notNull(),
    date: text("date").notNull(),
    time: text("time").notNull(),
    durationMinutes: integer("duration_minutes").notNull(),
    serviceId: text("service_id").notNull(),
    serviceName: text("service_name").notNull(),
    servicePrice: text("service_price").notNull(),
    clientName: text("client_name"),
    clientEmail: text("client_email"),
    clientPhone: text("client_phone"),
    paymentStatus: text("payment_status").notNull(),
    paymentAmountPaid: real("payment_amount_paid").notNull(),
    paymentAgreedAmount: real("payment_agreed_amount"),
    paymentCurrency: text("payment_currency").notNull(),
    paymentReference: text("payment_reference"),
    location: text("location"),
    notes: text("notes"),
    rescheduleCount: integer("reschedule_count").notNull(),
    originalDate: text("original_date"),
    originalTime: text("original_time"),
    rescheduleLink: text("reschedule_link"),
    cancelLink: text("cancel_link"),
    conversationId: text("conversation_id"),
    createdAt: createdAt(),
    ...snapshotColumns(),
  },
  // GET /appointments reads the most recently booked first, optionally of one status: each shape has an index in
  // that order, so a page reads only the rows it returns. With `since` (an appointment date), the date indexes find
  // the appointments on or after it, which are then sorted: a read bounded by what the partner asked for, not by
  // every booking the business ever had. `updated_since` is read the same way, through `…_business_updated`.
  (t) => [
    primaryKey({ columns: [t.businessId, t.id] }),
    index("bookings_business_created").on(t.businessId, t.createdAt, t.id),
    index("bookings_business_status_created").on(t.businessId, t.status, t.createdAt, t.id),
    index("bookings_business_date").on(t.businessId, t.date, t.time, t.id),
    index("bookings_business_status_date").on(t.businessId, t.status, t.date, t.time, t.id),
    index("bookings_business_updated").on(t.businessId, t.updatedAt),
  ],
);

export type OrderItem = { service_id: string; name: string; qty: number; unit_price: number };

/**
 * Snapshots of the core platform's orders, read by `GET /orders`, keyed like bookings by (business, id). Columns
 * mirror the partner contract's Order object.
 */
export const orders = sqliteTable(
  "orders",
  {
    id: integer("id").notNull(),
    businessId: text("business_id")
      .notNull()
      .references(() => businesses.id, { onDelete: "cascade" }),
    status: text("status", { enum: ORDER_STATUSES }).notNull(),
    items: text("items", { mode: "json" }).$type<OrderItem[]>().notNull(),
    total: real("total").notNull(),
    payOnDelivery: flag("pay_on_delivery").notNull(),
    fulfillmentType: text("fulfillment_type", { enum: FULFILLMENT_TYPES }).notNull(),
    deliveryAddress: text("delivery_address"),
    deliveryNotes: text("delivery_notes"),
    trackingNumber: text("tracking_number"),
    carrier: text("carrier"),
    readyAt: text("ready_at"),
    estimatedReadyAt: text("estimated_ready_at"),
    trackingUrl: text("tracking_url"),
    clientName: text("client_name"),
    clientEmail: text("client_email"),
    clientPhone: text("client_phone"),
    paymentStatus: text("payment_status").notNull(),
    paymentAmountPaid: real("payment_amount_paid").notNull(),
    notes: text("notes"),
    conversationId: text("conversation_id"),
    createdAt: createdAt(),
    ...snapshotColumns(),
  },
  (t) => [
    primaryKey({ columns: [t.businessId, t.id] }),
    index("orders_business_created").on(t.businessId, t.createdAt, t.id),
    index("orders_business_status_created").on(t.businessId, t.status, t.createdAt, t.id),
    index("orders_business_updated").on(t.businessId, t.updatedAt),
  ],
);
