import { partnerRead } from "../access/partner-operation";
import { type AppointmentFilters, listAppointments } from "./bookings";
import { listOrders, type OrderFilters } from "./orders";

/* What the partner API's booking and order routes run (src/routes/appointments.ts, src/routes/orders.ts). */

export const listAppointmentsOperation = partnerRead((side, filters: AppointmentFilters) =>
  listAppointments(side, filters),
);

export const listOrdersOperation = partnerRead((side, filters: OrderFilters) => listOrders(side, filters));
