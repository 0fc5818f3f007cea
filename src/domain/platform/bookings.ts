import { and, desc, eq, gte } from "drizzle-orm";
import { afterRow, type Page, readPage } from "../../db/pages";
import { type Read, read } from "../../db/reads";
import { bookings } from "../../db/schema";
import { type ShapedArgument, statement } from "../../db/statements";
import { notFound } from "../../lib/api-error";
import type { BookingObject, ReportedBooking } from "../../schemas/booking";
import { businessOf, type Reach, reachArgument, type SqlReach } from "../access/scope";
import type { PageFilters } from "./paging";

export type BookingRow = typeof bookings.$inferSelect;

export type AppointmentFilters = PageFilters & { status?: BookingRow["status"]; since?: string };

type PageArguments = { reach: ShapedArgument<SqlReach>; limit: number; status?: string; since?: string };

/**
 * Spec, GET /appointments: newest first, optionally one status and on or after `since`. "Newest" is the most recently
 * booked (`created_at`, then `id`), as for orders, events and responses; `since` filters on the appointment's own date.
 * The order is that of the indexes `bookings_business_created` and `bookings_business_status_created` (migration 0010),
 * so a page reads only the rows it returns. With `since`, SQLite reads the range of `bookings_business_date` (or
 * `…_status_date`) and sorts it: the appointments on or after `since`, where walking the booking order would read every
 * booking the business ever had when fewer than a page match (test/api/round-trips-hot-paths.test.ts). `updated_since`
 * reads the range of `bookings_business_updated` (migration 0014) the same way; `after` is the page's cursor
 * (src/db/pages.ts). Bound parameters: at most 10 of D1's 100, the reach's three at most (an access
 * token's) and seven more, the cursor's id three times among them (test/platform/paging-and-sync.test.ts).
 */
const appointmentsPage = statement<PageArguments & { updatedSince?: string; after?: number }>()(
  (db, { reach, limit, status, since, updatedSince, after }) =>
    db
      .select()
      .from(bookings)
      .where(
        and(
          eq(bookings.businessId, businessOf(reach)),
          status === undefined ? undefined : eq(bookings.status, status),
          since === undefined ? undefined : gte(bookings.date, since),
          updatedSince === undefined ? undefined : gte(bookings.updatedAt, updatedSince),
          after === undefined ? undefined : afterRow(db, bookings, after),
        ),
      )
      .orderBy(desc(bookings.createdAt), desc(bookings.id))
      .limit(limit),
);

/** One booking of the reach's business, by its id (`GET /appointments/{id}`, and the check of a page's cursor). */
const bookingById = statement<{ reach: ShapedArgument<SqlReach>; id: number }>()((db, { reach, id }) =>
  db
    .select()
    .from(bookings)
    .where(and(eq(bookings.id, id), eq(bookings.businessId, businessOf(reach)))),
);

/** Another business's booking reads exactly as an unknown id (docs/architecture.md, Everywhere: Scoping). */
export const bookingNotFound = () => notFound("No booking with that id exists for this credential.");

/**
 * One page and `has_more`, in one round trip with the cursor's check (src/db/pages.ts).
 */
export function listAppointments(reach: Reach, filters: AppointmentFilters): Read<Page<BookingObject>> {
  const { limit, status, since, updatedSince, startingAfter } = filters;
  const scope = reachArgument(reach);
  const page = appointmentsPage({ reach: scope, limit: limit + 1, status, since, updatedSince, after: startingAfter });
  const cursor = startingAfter === undefined ? undefined : bookingById({ reach: scope, id: startingAfter });
  return readPage(
    limit,
    page,
    cursor,
    toBookingObject,
    'The query parameter "starting_after" names no booking of this business.',
  );
}

/** `GET /appointments/{id}`: the booking, or the 404. */
export function getAppointment(reach: Reach, id: number): Read<BookingObject> {
  return read(bookingById({ reach: reachArgument(reach), id }), ([row]) => {
    if (!row) throw bookingNotFound();
    return toBookingObject(row);
  });
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
