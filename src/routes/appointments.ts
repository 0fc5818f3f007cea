import { z } from "@hono/zod-openapi";
import { runOperation } from "../admission/partner-admission";
import { BOOKING_STATUSES } from "../db/schema";
import { getAppointmentOperation, listAppointmentsOperation } from "../domain/platform/booking-and-order-operations";
import { bookingNotFound } from "../domain/platform/bookings";
import { idOrNotFound, isoDate, pathId } from "../lib/validation";
import { BookingObject, BookingsPage } from "../schemas/booking";
import { errorResponses } from "../schemas/error-body";
import { listSynced, pagedList, syncedListQuery } from "./paged-lists";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

/**
 * `GET /appointments`: one of the booking statuses, and `since` (`YYYY-MM-DD`), the appointment's date rather than its
 * booking's (docs/decisions.md, Reading bookings and orders); the rest of the query is every synced list's.
 */
const AppointmentsQuery = syncedListQuery("booking", {
  status: z.enum(BOOKING_STATUSES).optional(),
  since: isoDate
    .optional()
    .openapi({ description: "Only appointments whose date is on or after this date (it does not change the order)" }),
});

const listAppointmentsRoute = partnerRoute({
  method: "get",
  path: "/appointments",
  operationId: "listAppointments",
  summary: "Bookings, most recently booked first",
  description:
    "Newest first by when the booking was made (`created_at`, then `id`), as orders and events are. `since` filters on the appointment's own `date`, `updated_since` on `updated_at`; the next page starts after the last id of this one (`starting_after`), while `has_more` is true.",
  tags: ["Bookings and orders"],
  ...pagedList(AppointmentsQuery, "A page of bookings", BookingsPage),
});

// Apart, as every read by id is: its own object and 404 (docs/architecture.md, Adding a partner read or write).
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
  .openapi(listAppointmentsRoute, (c) => listSynced(c, listAppointmentsOperation))
  .openapi(getAppointmentRoute, (c) =>
    runOperation(
      c,
      getAppointmentOperation,
      () => idOrNotFound(c.req.valid("param").id, bookingNotFound),
      (booking) => c.json(booking, 200),
    ),
  );
