import { orders } from "../../db/schema";
import type { OrderObject, ReportedOrder } from "../../schemas/order";
import { type PageFilters, snapshotReads } from "./snapshot-reads";

export type OrderRow = typeof orders.$inferSelect;

/** No `since`: an order has no appointment date (docs/decisions.md, Reading bookings and orders). */
export type OrderFilters = Omit<PageFilters<OrderRow["status"]>, "since">;

/**
 * `GET /orders` and `GET /orders/{id}` (docs/decisions.md, Paging and sync): newest (most recently placed) first,
 * through `orders_business_created` / `…_status_created`, and with `updated_since` the range of
 * `orders_business_updated`, sorted. Bound parameters: at most 9 of D1's 100, the reach's three at most (an access
 * token's) and six more.
 */
export const {
  list: listOrders,
  get: getOrder,
  objectNotFound: orderNotFound,
} = snapshotReads(orders, "order", toOrderObject);

/** An Order object, exactly its members (docs/guides/syncing.md, Booking and order objects). */
export function toOrderObject(row: OrderRow): OrderObject {
  return {
    id: row.id,
    status: row.status,
    items: row.items,
    total: row.total,
    pay_on_delivery: row.payOnDelivery,
    fulfillment_type: row.fulfillmentType,
    delivery_address: row.deliveryAddress,
    delivery_notes: row.deliveryNotes,
    tracking_number: row.trackingNumber,
    carrier: row.carrier,
    ready_at: row.readyAt,
    estimated_ready_at: row.estimatedReadyAt,
    tracking_url: row.trackingUrl,
    client: { name: row.clientName, email: row.clientEmail, phone: row.clientPhone },
    payment: { status: row.paymentStatus, amount_paid: row.paymentAmountPaid },
    notes: row.notes,
    conversation_id: row.conversationId,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/**
 * The stored snapshot of an Order object reported by the core platform, stored at `updatedAt` (the service's clock).
 * Apart from `toBookingRow`, as the objects' mappings are: each has its own members, and either may gain one alone.
 */
export function toOrderRow(
  businessId: string,
  order: ReportedOrder,
  updatedAt: string,
): Omit<typeof orders.$inferInsert, "reportToken"> {
  return {
    id: order.id,
    businessId,
    status: order.status,
    items: order.items,
    total: order.total,
    payOnDelivery: order.pay_on_delivery,
    fulfillmentType: order.fulfillment_type,
    deliveryAddress: order.delivery_address,
    deliveryNotes: order.delivery_notes,
    trackingNumber: order.tracking_number,
    carrier: order.carrier,
    readyAt: order.ready_at,
    estimatedReadyAt: order.estimated_ready_at,
    trackingUrl: order.tracking_url,
    clientName: order.client.name,
    clientEmail: order.client.email,
    clientPhone: order.client.phone,
    paymentStatus: order.payment.status,
    paymentAmountPaid: order.payment.amount_paid,
    notes: order.notes,
    conversationId: order.conversation_id,
    createdAt: order.created_at,
    updatedAt,
  };
}
