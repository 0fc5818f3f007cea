import { z } from "@hono/zod-openapi";
import { runOperation } from "../admission/partner-admission";
import { ORDER_STATUSES } from "../db/schema";
import { getOrderOperation, listOrdersOperation } from "../domain/platform/booking-and-order-operations";
import { orderNotFound } from "../domain/platform/orders";
import { idOrNotFound, pathId, queryId, queryInteger, timestamp } from "../lib/validation";
import { errorResponses } from "../schemas/error-body";
import { OrderObject, OrdersPage } from "../schemas/order";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

/**
 * Spec, GET /orders: limit 1..100 (25), status one of the seven order statuses; and the paging and sync of
 * docs/decisions.md, Paging and sync: starting_after, updated_since.
 */
const OrdersQuery = z.object({
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
  status: z.enum(ORDER_STATUSES).optional(),
  starting_after: queryId(
    "an order",
    "The id of the last order of the previous page: this page starts after it. An order of another business is a 400.",
  ),
  updated_since: timestamp.optional().openapi({
    description:
      "Only orders whose `updated_at` is at or after this instant (it does not change the order): for a sync, a minute before the largest `updated_at` the previous sync saw",
  }),
});

const listOrdersRoute = partnerRoute({
  method: "get",
  path: "/orders",
  operationId: "listOrders",
  summary: "Orders, newest first",
  description:
    "Newest first by when the order was placed (`created_at`, then `id`). `updated_since` filters on `updated_at`; the next page starts after the last id of this one (`starting_after`), while `has_more` is true.",
  tags: ["Bookings and orders"],
  request: { query: OrdersQuery },
  responses: {
    200: { description: "A page of orders, in the same envelope as appointments", content: json(OrdersPage) },
    ...errorResponses(400, 401, 403),
  },
});

const getOrderRoute = partnerRoute({
  method: "get",
  path: "/orders/{id}",
  operationId: "getOrder",
  summary: "One order",
  tags: ["Bookings and orders"],
  request: { params: z.object({ id: pathId }) },
  responses: {
    200: { description: "The order, as the list shows it", content: json(OrderObject) },
    ...errorResponses(401, 403, 404),
  },
});

export const orders = createPartnerRouter()
  .openapi(listOrdersRoute, (c) =>
    runOperation(
      c,
      listOrdersOperation,
      () => {
        const { starting_after, updated_since, ...filters } = c.req.valid("query");
        return { ...filters, startingAfter: starting_after, updatedSince: updated_since };
      },
      (page) => c.json({ data: page.data, has_more: page.hasMore }, 200),
    ),
  )
  .openapi(getOrderRoute, (c) =>
    runOperation(
      c,
      getOrderOperation,
      () => idOrNotFound(c.req.valid("param").id, orderNotFound),
      (order) => c.json(order, 200),
    ),
  );
