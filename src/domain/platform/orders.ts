import { and, desc, eq, gte } from "drizzle-orm";
import { afterRow, type Page, readPage } from "../../db/pages";
import { type Read, read } from "../../db/reads";
import { orders } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import { notFound } from "../../lib/api-error";
import type { OrderObject, ReportedOrder } from "../../schemas/order";
import { businessOf, type Reach, reachArgument, type SqlReach } from "../access/scope";
import type { PageFilters } from "./paging";

export type OrderRow = typeof orders.$inferSelect;

export type OrderFilters = PageFilters & { status?: OrderRow["status"] };

/**
 * Spec, GET /orders: newest (most recently placed) first; served by `orders_business_created` / `..._status_created`,
 * and with `updated_since` by the range of `orders_business_updated`, sorted. `after`: the page's cursor
 * (src/db/pages.ts). Bound parameters: at most 9 of D1's 100, the reach's three at most (an access
 * token's) and six more.
 */
const ordersPage = statement<{
  reach: ShapedArgument<SqlReach>;
  limit: number;
  status?: string;
  updatedSince?: string;
  after?: number;
}>()((db, { reach, limit, status, updatedSince, after }) =>
  db
    .select()
    .from(orders)
    .where(
      and(
        eq(orders.businessId, businessOf(reach)),
        status === undefined ? undefined : eq(orders.status, status),
        updatedSince === undefined ? undefined : gte(orders.updatedAt, updatedSince),
        after === undefined ? undefined : afterRow(db, orders, after),
      ),
    )
    .orderBy(desc(orders.createdAt), desc(orders.id))
    .limit(limit),
);

/** One order of the reach's business, by its id (`GET /orders/{id}`, and the check of a page's cursor). */
const orderById = statement<{ reach: ShapedArgument<SqlReach>; id: number }>()((db, { reach, id }) =>
  db
    .select()
    .from(orders)
    .where(and(eq(orders.id, id), eq(orders.businessId, businessOf(reach)))),
);

/** Another business's order reads exactly as an unknown id (docs/architecture.md, Everywhere: Scoping). */
export const orderNotFound = () => notFound("No order with that id exists for this credential.");

/** One page and `has_more`, in one round trip with the cursor's check (src/db/pages.ts). */
export function listOrders(reach: Reach, filters: OrderFilters): Read<Page<OrderObject>> {
  const { limit, status, updatedSince, startingAfter } = filters;
  const scope = reachArgument(reach);
  const page = ordersPage({ reach: scope, limit: limit + 1, status, updatedSince, after: startingAfter });
  const cursor = startingAfter === undefined ? undefined : orderById({ reach: scope, id: startingAfter });
  return readPage(
    limit,
    page,
    cursor,
    toOrderObject,
    'The query parameter "starting_after" names no order of this business.',
  );
}

/** `GET /orders/{id}`: the order, or the 404. */
export function getOrder(reach: Reach, id: number): Read<OrderObject> {
  return read(orderById({ reach: reachArgument(reach), id }), ([row]) => {
    if (!row) throw orderNotFound();
    return toOrderObject(row);
  });
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
    updated_at: row.updatedAt,
  };
}

/** The stored snapshot of an Order object reported by the core platform, stored at `updatedAt` (the service's clock). */
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
