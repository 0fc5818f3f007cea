import { z } from "@hono/zod-openapi";
import { ORDER_STATUSES } from "../db/schema";
import { listOrdersOperation } from "../domain/platform/partner-api";
import { queryInteger } from "../lib/validation";
import { errorResponses } from "../schemas/errors";
import { OrderObject } from "../schemas/order";
import { runOperation } from "./operation-runner";
import { createPartnerRouter, partnerRoute } from "./partner-router";

/** Spec, GET /orders: limit 1..100 (25), status one of the seven order statuses. */
const OrdersQuery = z.object({
  limit: queryInteger({ min: 1, max: 100, default: 25 }),
  status: z.enum(ORDER_STATUSES).optional(),
});

const listOrdersRoute = partnerRoute({
  method: "get",
  path: "/orders",
  operationId: "listOrders",
  summary: "Orders, newest first",
  tags: ["Bookings and orders"],
  request: { query: OrdersQuery },
  responses: {
    200: {
      description: "A page of orders, in the same envelope as appointments",
      content: { "application/json": { schema: z.object({ data: z.array(OrderObject) }) } },
    },
    ...errorResponses(400, 401, 403),
  },
});

export const orders = createPartnerRouter().openapi(listOrdersRoute, (c) =>
  runOperation(
    c,
    listOrdersOperation,
    () => c.req.valid("query"),
    (data) => c.json({ data }, 200),
  ),
);
