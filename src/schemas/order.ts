import { z } from "@hono/zod-openapi";
import { FULFILLMENT_TYPES, ORDER_STATUSES } from "../db/schema";
import { timestamp } from "../lib/validation";
import { ClientContact } from "./booking";

/** Spec: Resources, Order object. */
export const OrderObject = z
  .object({
    id: z.number().int(),
    status: z.enum(ORDER_STATUSES),
    items: z.array(
      z.object({ service_id: z.string(), name: z.string(), qty: z.number().int(), unit_price: z.number() }),
    ),
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
  })
  .openapi("Order");

export type OrderObject = z.infer<typeof OrderObject>;
