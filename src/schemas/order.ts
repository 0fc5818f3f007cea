import { z } from "@hono/zod-openapi";
import { FULFILLMENT_TYPES, ORDER_STATUSES } from "../db/schema";
import { recordId, timestamp } from "../lib/validation";
import { ClientContact, serviceUpdatedAt } from "./booking";

/** The members of an order that the core platform reports (docs/guides/syncing.md, Booking and order objects). */
const orderMembers = {
  id: recordId,
  status: z.enum(ORDER_STATUSES),
  items: z.array(z.object({ service_id: z.string(), name: z.string(), qty: z.number().int(), unit_price: z.number() })),
  total: z.number(),
  pay_on_delivery: z.boolean().openapi({ description: "True when the customer pays on collection or delivery" }),
  fulfillment_type: z.enum(FULFILLMENT_TYPES),
  delivery_address: z.string().nullable(),
  delivery_notes: z.string().nullable(),
  tracking_number: z.string().nullable(),
  carrier: z.string().nullable(),
  ready_at: timestamp.nullable(),
  estimated_ready_at: timestamp.nullable(),
  tracking_url: z.string().nullable().openapi({ description: "The customer's own tracking page" }),
  client: ClientContact,
  payment: z.object({ status: z.string(), amount_paid: z.number() }),
  notes: z.string().nullable(),
  conversation_id: z.string().nullable(),
  created_at: timestamp,
};

/** An order as partners read it and events carry it; `updated_at` as for bookings (docs/guides/syncing.md). */
export const OrderObject = z.object({ ...orderMembers, updated_at: serviceUpdatedAt }).openapi("Order");

export type OrderObject = z.infer<typeof OrderObject>;

/** An Order object as the core platform reports it (src/schemas/platform-changes.ts): `updated_at` optional, ignored. */
export const ReportedOrder = z.object({ ...orderMembers, updated_at: serviceUpdatedAt.optional() });

export type ReportedOrder = z.infer<typeof ReportedOrder>;

/** `GET /orders`: one page, and whether another follows (docs/decisions.md, Paging and sync). */
export const OrdersPage = z
  .object({
    data: z.array(OrderObject),
    has_more: z.boolean().openapi({ description: "Whether more orders follow: pass the last id as starting_after" }),
  })
  .openapi("OrdersPage");
