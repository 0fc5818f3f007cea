import { and, desc, eq, gte } from "drizzle-orm";
import { type Read, read } from "../../db/reads";
import { bookings } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import type { BookingObject } from "../../schemas/booking";
import { businessOf, type Reach, reachArgument, type SqlReach } from "../access/scope";

export type BookingRow = typeof bookings.$inferSelect;

export type AppointmentFilters = { limit: number; status?: BookingRow["status"]; since?: string };

/**
 * Spec, GET /appointments: newest first, optionally one status and on or after `since`. "Newest" is the most recently
 * booked (`created_at`, then `id`), as for orders, events and responses; `since` filters on the appointment's own date.
 * The order is that of the indexes `bookings_business_created` and `bookings_business_status_created` (migration 0010),
 * so a page reads only the rows it returns. With `since`, SQLite reads the range of `bookings_business_date` (or
 * `…_status_date`) and sorts it: the appointments on or after `since`, where walking the booking order would read every
 * booking the business ever had when fewer than a page match (test/api/round-trips-hot-paths.test.ts).
 */
const appointmentsPage = statement<{ reach: ShapedArgument<SqlReach> } & AppointmentFilters>()(
  (db, { reach, limit, status, since }) =>
    db
      .select()
      .from(bookings)
      .where(
        and(
          eq(bookings.businessId, businessOf(reach)),
          status === undefined ? undefined : eq(bookings.status, status),
          since === undefined ? undefined : gte(bookings.date, since),
        ),
      )
      .orderBy(desc(bookings.createdAt), desc(bookings.id))
      .limit(limit),
);

export function listAppointments(reach: Reach, { limit, status, since }: AppointmentFilters): Read<BookingObject[]> {
  return read(appointmentsPage({ reach: reachArgument(reach), limit, status, since }), (rows) =>
    rows.map(toBookingObject),
  );
}

/** Spec: Resources, Booking object: exactly its fields, nested as the spec nests them. */
export function toBookingObject(row: BookingRow): BookingObject {
  return {
    id: row.id,
    status: row.status,
    date: row.date,
    time: row.time,
    duration_minutes: row.durationMinutes,
    service: { id: row.serviceId, name: row.serviceName, price: row.servicePrice },
    client: { name: row.clientName, email: row.clientEmail, phone: row.clientPhone },
    payment: {
      status: row.paymentStatus,
      amount_paid: row.paymentAmountPaid,
      agreed_amount: row.paymentAgreedAmount,
      currency: row.paymentCurrency,
      reference: row.paymentReference,
    },
    location: row.location,
    notes: row.notes,
    reschedule_count: row.rescheduleCount,
    original_date: row.originalDate,
    original_time: row.originalTime,
    links:
      row.rescheduleLink === null || row.cancelLink === null
        ? null
        : { reschedule: row.rescheduleLink, cancel: row.cancelLink },
    conversation_id: row.conversationId,
    created_at: row.createdAt,
  };
}

/** The stored snapshot of a Booking object reported by the core platform. */
export function toBookingRow(
  businessId: string,
  booking: BookingObject,
): Omit<typeof bookings.$inferInsert, "reportToken"> {
  return {
    id: booking.id,
    businessId,
    status: booking.status,
    date: booking.date,
    time: booking.time,
    durationMinutes: booking.duration_minutes,
    serviceId: booking.service.id,
    serviceName: booking.service.name,
    servicePrice: booking.service.price,
    clientName: booking.client.name,
    clientEmail: booking.client.email,
    clientPhone: booking.client.phone,
    paymentStatus: booking.payment.status,
    paymentAmountPaid: booking.payment.amount_paid,
    paymentAgreedAmount: booking.payment.agreed_amount,
    paymentCurrency: booking.payment.currency,
    paymentReference: booking.payment.reference,
    location: booking.location,
    notes: booking.notes,
    rescheduleCount: booking.reschedule_count,
    originalDate: booking.original_date,
    originalTime: booking.original_time,
    rescheduleLink: booking.links?.reschedule ?? null,
    cancelLink: booking.links?.cancel ?? null,
    conversationId: booking.conversation_id,
    createdAt: booking.created_at,
  };
}
