import { and, desc, eq } from "drizzle-orm";
import { type Read, read } from "../../db/reads";
import { orders } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import type { OrderObject } from "../../schemas/order";
import { businessOf, type Reach, reachArgument, type SqlReach } from "../access/scope";

export type OrderRow = typeof orders.$inferSelect;

export type OrderFilters = { limit: number; status?: OrderRow["status"] };

/** Spec, GET /orders: newest (most recently placed) first; served by `orders_business_created` / `..._status_created`. */
const ordersPage = statement<{ reach: ShapedArgument<SqlReach> } & OrderFilters>()((db, { reach, limit, status }) =>
  db
    .select()
    .from(orders)
    .where(and(eq(orders.businessId, businessOf(reach)), status === undefined ? undefined : eq(orders.status, status)))
    .orderBy(desc(orders.createdAt), desc(orders.id))
    .limit(limit),
);

export function listOrders(reach: Reach, { limit, status }: OrderFilters): Read<OrderObject[]> {
  return read(ordersPage({ reach: reachArgument(reach), limit, status }), (rows) => rows.map(toOrderObject));
}

/** Spec: Resources, Order object: exactly its fields. */
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
  };
}

/** The stored snapshot of an Order object reported by the core platform. */
export function toOrderRow(businessId: string, order: OrderObject): Omit<typeof orders.$inferInsert, "reportToken"> {
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
  };
}
