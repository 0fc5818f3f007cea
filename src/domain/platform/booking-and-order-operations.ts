import { partnerRead } from "../access/partner-operation";
import { type AppointmentFilters, getAppointment, listAppointments } from "./bookings";
import { getOrder, listOrders, type OrderFilters } from "./orders";

/* What the partner API's booking and order routes run (src/routes/appointments.ts, src/routes/orders.ts). */

export const listAppointmentsOperation = partnerRead((side, filters: AppointmentFilters) =>
  listAppointments(side, filters),
);

export const getAppointmentOperation = partnerRead((side, id: number) => getAppointment(side, id));

export const listOrdersOperation = partnerRead((side, filters: OrderFilters) => listOrders(side, filters));

export const getOrderOperation = partnerRead((side, id: number) => getOrder(side, id));
