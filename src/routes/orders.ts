import { z } from "@hono/zod-openapi";
import { runOperation } from "../admission/partner-admission";
import { ORDER_STATUSES } from "../db/schema";
import { getOrderOperation, listOrdersOperation } from "../domain/platform/booking-and-order-operations";
import { orderNotFound } from "../domain/platform/orders";
import { idOrNotFound, pathId } from "../lib/validation";
import { errorResponses } from "../schemas/error-body";
import { OrderObject, OrdersPage } from "../schemas/order";
import { listSynced, pagedList, syncedListQuery } from "./paged-lists";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

/** `GET /orders`: one of the seven order statuses; the rest of the query is every synced list's. */
const OrdersQuery = syncedListQuery("order", { status: z.enum(ORDER_STATUSES).optional() });

const listOrdersRoute = partnerRoute({
  method: "get",
  path: "/orders",
  operationId: "listOrders",
  summary: "Orders, newest first",
  description:
    "Newest first by when the order was placed (`created_at`, then `id`). `updated_since` filters on `updated_at`; the next page starts after the last id of this one (`starting_after`), while `has_more` is true.",
  tags: ["Bookings and orders"],
  ...pagedList(OrdersQuery, "A page of orders, in the same envelope as appointments", OrdersPage),
});

// Apart, as every read by id is: its own object and 404 (docs/architecture.md, Adding a partner read or write).
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
  .openapi(listOrdersRoute, (c) => listSynced(c, listOrdersOperation))
  .openapi(getOrderRoute, (c) =>
    runOperation(
      c,
      getOrderOperation,
      () => idOrNotFound(c.req.valid("param").id, orderNotFound),
      (order) => c.json(order, 200),
    ),
  );
