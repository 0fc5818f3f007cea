import { z } from "@hono/zod-openapi";
import { BOOKING_STATUSES } from "../db/schema";
import { clockTime, isoDate, recordId, timestamp } from "../lib/validation";

/** The customer's contact details on bookings and orders: each may be null. */
export const ClientContact = z.object({
  name: z.string().nullable(),
  email: z.string().nullable(),
  phone: z.string().nullable(),
});

/** The members of a booking that the core platform reports (docs/guides/syncing.md, Booking and order objects). */
const bookingMembers = {
  id: recordId,
  status: z.enum(BOOKING_STATUSES),
  date: isoDate.openapi({ description: "The appointment's date, business time zone (what `since` filters on)" }),
  time: clockTime.openapi({ description: "Business time zone" }),
  duration_minutes: z.number().int(),
  service: z.object({
    id: z.string(),
    name: z.string(),
    price: z.string().openapi({ description: "As the business wrote it" }),
  }),
  client: ClientContact,
  payment: z.object({
    status: z.string(),
    amount_paid: z.number(),
    agreed_amount: z.number().nullable().openapi({ description: "Negotiated price" }),
    currency: z.string(),
    reference: z.string().nullable(),
  }),
  location: z.string().nullable().openapi({ description: "A meeting link, or the client's address for a home visit" }),
  notes: z.string().nullable(),
  reschedule_count: z.number().int(),
  original_date: isoDate.nullable(),
  original_time: clockTime.nullable(),
  links: z
    .object({ reschedule: z.string(), cancel: z.string() })
    .nullable()
    .openapi({ description: "The client's own page addresses" }),
  conversation_id: z.string().nullable(),
  created_at: timestamp.openapi({
    description: "When the client booked: GET /appointments lists the most recently booked first",
  }),
};

/**
 * `updated_at` is the service's own stamp: when it stored the latest change of the object (docs/decisions.md, Paging
 * and sync). The core platform does not set it; a report that carries one (a Booking object as read) has it ignored.
 */
export const serviceUpdatedAt = timestamp.openapi({
  description: "When the service stored the latest change of this object: what `updated_since` filters on",
});

/** A booking as partners read it and events carry it (docs/guides/syncing.md, Booking and order objects). */
export const BookingObject = z.object({ ...bookingMembers, updated_at: serviceUpdatedAt }).openapi("Booking");

export type BookingObject = z.infer<typeof BookingObject>;

/** A Booking object as the core platform reports it (src/schemas/platform-changes.ts): `updated_at` optional, ignored. */
export const ReportedBooking = z.object({ ...bookingMembers, updated_at: serviceUpdatedAt.optional() });

export type ReportedBooking = z.infer<typeof ReportedBooking>;

/** `GET /appointments`: one page, and whether another follows (docs/decisions.md, Paging and sync). */
export const BookingsPage = z
  .object({
    data: z.array(BookingObject),
    has_more: z.boolean().openapi({
      description: "Whether more bookings follow: pass the last id as starting_after",
    }),
  })
  .openapi("BookingsPage");
