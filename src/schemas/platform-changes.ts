import { z } from "zod";
import { timestamp } from "../lib/validation";
import { BookingObject, ReportedBooking } from "./booking";
import { OrderObject, ReportedOrder } from "./order";

/**
 * What the core platform reports on `POST /internal/v1/businesses/{id}/events` (docs/decisions.md, Events from the
 * core platform). Objects are bookings and orders without the service's own `updated_at`, and event data as
 * partners receive it (docs/guides/webhooks.md, The events).
 */
export const BookingChange = z.object({
  booking: ReportedBooking,
  cancelled_by: z.enum(["client", "merchant"]).optional(),
  reason: z.string().max(1000).nullable().optional(),
  completed_by: z.literal("client").optional(),
});

export const OrderChange = z.object({ order: ReportedOrder, reason: z.string().max(1000).nullable().optional() });

/**
 * A payment's data, carrying the booking or the order it paid: as reported (without `updated_at`), or as delivered
 * (the object as stored by the same report, with its `updated_at`: src/domain/platform/changes.ts).
 */
const paymentData = <B extends z.ZodType, O extends z.ZodType>(booking: B, order: O) =>
  z
    .object({
      kind: z.enum(["booking", "order"]),
      amount: z.number(),
      currency: z.string().regex(/^[A-Z]{3}$/, { error: "must be an ISO 4217 code" }),
      reference: z.string().nullable(),
      booking: booking.optional(),
      order: order.optional(),
    })
    .refine((data) => (data.kind === "booking" ? data.booking && !data.order : data.order && !data.booking), {
      error: "must carry the booking or the order that its kind names, and only that one",
    });

const PaymentReceived = z.object({
  event: z.literal("payment.received"),
  data: paymentData(ReportedBooking, ReportedOrder),
});

/** `payment.received` as delivered (src/schemas/events.ts). */
export const PaymentReceivedData = paymentData(BookingObject, OrderObject);

const LeadCreated = z.object({
  event: z.literal("lead.created"),
  data: z.object({
    lead: z.object({
      id: z.union([z.string(), z.number()]),
      name: z.string().nullable(),
      contact: z.string().nullable(),
      message: z.string().nullable(),
      source: z.string().nullable(),
      created_at: timestamp,
    }),
  }),
});

const ReviewCreated = z.object({
  event: z.literal("review.created"),
  data: z.object({
    review: z.object({
      id: z.union([z.string(), z.number()]),
      rating: z.number().int().min(1).max(5),
      body: z.string().nullable(),
      client_name: z.string().nullable(),
      status: z.string(),
      submitted_at: timestamp,
    }),
  }),
});

export const OTHER_CHANGES = {
  "payment.received": PaymentReceived,
  "lead.created": LeadCreated,
  "review.created": ReviewCreated,
};

export type BookingChange = z.infer<typeof BookingChange>;
export type OrderChange = z.infer<typeof OrderChange>;
export type OtherChange = z.infer<(typeof OTHER_CHANGES)[keyof typeof OTHER_CHANGES]>;
