import { bookings } from "../../db/schema";
import type { BookingObject, ReportedBooking } from "../../schemas/booking";
import { type PageFilters, snapshotReads } from "./snapshot-reads";

export type BookingRow = typeof bookings.$inferSelect;

export type AppointmentFilters = PageFilters<BookingRow["status"]>;

/**
 * `GET /appointments` and `GET /appointments/{id}` (docs/decisions.md, Reading bookings and orders): `since` filters on
 * the appointment's own date. A page walks `bookings_business_created` (or `…_status_created`, migration 0010), so it
 * reads only the rows it returns; with `since`, SQLite reads the range of `bookings_business_date` (or `…_status_date`)
 * and sorts it, where walking the booking order would read every booking the business ever had when fewer than a page
 * match (test/api/round-trips-hot-paths.test.ts); `updated_since` reads `bookings_business_updated` (migration 0014)
 * the same way. Bound parameters: at most 10 of D1's 100, the reach's three at most (an access token's) and seven
 * more, the cursor's id three times among them (test/platform/paging-and-sync.test.ts).
 */
export const {
  list: listAppointments,
  get: getAppointment,
  objectNotFound: bookingNotFound,
} = snapshotReads(bookings, "booking", toBookingObject, bookings.date);

/** A Booking object, exactly its members (docs/guides/syncing.md, Booking and order objects). */
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
    updated_at: row.updatedAt,
  };
}

/** The stored snapshot of a Booking object reported by the core platform, stored at `updatedAt` (the service's clock). */
export function toBookingRow(
  businessId: string,
  booking: ReportedBooking,
  updatedAt: string,
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
    updatedAt,
  };
}
