import { z } from "@hono/zod-openapi";
import { BOOKING_STATUSES } from "../db/schema";
import { listAppointmentsOperation } from "../domain/platform/partner-api";
import { isoDate, queryInteger } from "../lib/validation";
import { BookingObject } from "../schemas/booking";
import { errorResponses } from "../schemas/errors";
import { runOperation } from "./operation-runner";
import { createPartnerRouter, partnerRoute } from "./partner-router";

/** Spec, GET /appointments: limit 1..100 (25), status, since `YYYY-MM-DD` (the appointment's date, not its booking). */
const AppointmentsQuery = z.object({
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
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
    "Newest first by when the booking was made (`created_at`, then `id`), as orders and events are. `since` filters on the appointment's own `date`.",
  tags: ["Bookings and orders"],
  request: { query: AppointmentsQuery },
  responses: {
    200: {
      description: "A page of bookings",
      content: { "application/json": { schema: z.object({ data: z.array(BookingObject) }) } },
    },
    ...errorResponses(400, 401, 403),
  },
});

export const appointments = createPartnerRouter().openapi(listAppointmentsRoute, (c) =>
  runOperation(
    c,
    listAppointmentsOperation,
    () => c.req.valid("query"),
    (data) => c.json({ data }, 200),
  ),
);
