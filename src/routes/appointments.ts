import { z } from "@hono/zod-openapi";
import { runOperation } from "../admission/partner-admission";
import { BOOKING_STATUSES } from "../db/schema";
import { getAppointmentOperation, listAppointmentsOperation } from "../domain/platform/booking-and-order-operations";
import { bookingNotFound } from "../domain/platform/bookings";
import { idOrNotFound, isoDate, pathId, queryId, queryInteger, timestamp } from "../lib/validation";
import { BookingObject, BookingsPage } from "../schemas/booking";
import { errorResponses } from "../schemas/error-body";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

/**
 * Spec, GET /appointments: limit 1..100 (25), status, since `YYYY-MM-DD` (the appointment's date, not its booking);
 * and the paging and sync of docs/decisions.md, Paging and sync: starting_after, updated_since.
 */
const AppointmentsQuery = z.object({
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
  status: z.enum(BOOKING_STATUSES).optional(),
  since: isoDate
    .optional()
    .openapi({ description: "Only appointments whose date is on or after this date (it does not change the order)" }),
  starting_after: queryId(
    "a booking",
    "The id of the last booking of the previous page: this page starts after it. A booking of another business is a 400.",
  ),
  updated_since: timestamp.optional().openapi({
    description:
      "Only bookings whose `updated_at` is at or after this instant (it does not change the order): for a sync, a minute before the largest `updated_at` the previous sync saw",
  }),
});

const listAppointmentsRoute = partnerRoute({
  method: "get",
  path: "/appointments",
  operationId: "listAppointments",
  summary: "Bookings, most recently booked first",
  description:
    "Newest first by when the booking was made (`created_at`, then `id`), as orders and events are. `since` filters on the appointment's own `date`, `updated_since` on `updated_at`; the next page starts after the last id of this one (`starting_after`), while `has_more` is true.",
  tags: ["Bookings and orders"],
  request: { query: AppointmentsQuery },
  responses: {
    200: { description: "A page of bookings", content: json(BookingsPage) },
    ...errorResponses(400, 401, 403),
  },
});

const getAppointmentRoute = partnerRoute({
  method: "get",
  path: "/appointments/{id}",
  operationId: "getAppointment",
  summary: "One booking",
  tags: ["Bookings and orders"],
  request: { params: z.object({ id: pathId }) },
  responses: {
    200: { description: "The booking, as the list shows it", content: json(BookingObject) },
    ...errorResponses(401, 403, 404),
  },
});

export const appointments = createPartnerRouter()
  .openapi(listAppointmentsRoute, (c) =>
    runOperation(
      c,
      listAppointmentsOperation,
      () => {
        const { starting_after, updated_since, ...filters } = c.req.valid("query");
        return { ...filters, startingAfter: starting_after, updatedSince: updated_since };
      },
      (page) => c.json({ data: page.data, has_more: page.hasMore }, 200),
    ),
  )
  .openapi(getAppointmentRoute, (c) =>
    runOperation(
      c,
      getAppointmentOperation,
      () => idOrNotFound(c.req.valid("param").id, bookingNotFound),
      (booking) => c.json(booking, 200),
    ),
  );
