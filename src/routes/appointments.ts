import { z } from "@hono/zod-openapi";
import { BOOKING_STATUSES } from "../db/schema";
import { listAppointments } from "../domain/platform/bookings";
import { isoDate, queryInteger } from "../lib/validation";
import { readAsPartner } from "../middleware/authenticate-partner";
import { BookingObject } from "../schemas/booking";
import { errorResponses } from "../schemas/errors";
import { createPartnerRouter, partnerRoute } from "./partner-router";

/** Spec, GET /appointments: limit 1..100 (25), status, since `YYYY-MM-DD`. */
const AppointmentsQuery = z.object({
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
  status: z.enum(BOOKING_STATUSES).optional(),
  since: isoDate.optional().openapi({ description: "Only appointments on or after this date" }),
});

const listAppointmentsRoute = partnerRoute({
  method: "get",
  path: "/appointments",
  operationId: "listAppointments",
  summary: "Bookings, newest appointment first",
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

export const appointments = createPartnerRouter().openapi(listAppointmentsRoute, async (c) => {
  const filters = c.req.valid("query");
  const data = await readAsPartner(c, (scope) => listAppointments(scope, filters));
  return c.json({ data }, 200);
});
