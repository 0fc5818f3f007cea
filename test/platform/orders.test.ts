import { describe, expect, it } from "vitest";
import { orders } from "../../src/db/schema";
import { createBusiness, insertAll, orderRow } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";

type Page = { data: Array<Record<string, unknown> & { id: number; status: string; created_at: string }> };

const ORDER_FIELDS = [
  "id",
  "status",
  "items",
  "total",
  "pay_on_delivery",
  "fulfillment_type",
  "delivery_address",
  "delivery_notes",
  "tracking_number",
  "carrier",
  "ready_at",
  "estimated_ready_at",
  "tracking_url",
  "client",
  "payment",
  "notes",
  "conversation_id",
  "created_at",
  "updated_at",
].sort();

const STATUSES = [
  "pending",
  "confirmed",
  "preparing",
  "ready_for_pickup",
  "out_for_delivery",
  "fulfilled",
  "cancelled",
] as const;

describe("GET /api/v1/orders", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();
  const start = Date.parse("2026-11-01T08:00:00.000Z");
  const rows = Array.from({ length: 35 }, (_, i) =>
    orderRow(business.id, {
      status: STATUSES[i % STATUSES.length],
      createdAt: new Date(start + i * 3_600_000).toISOString(),
    }),
  );
  const delivery = orderRow(business.id, {
    status: "out_for_delivery",
    fulfillmentType: "delivery",
    payOnDelivery: true,
    deliveryAddress: "Keizersgracht 1, Amsterdam",
    deliveryNotes: "Ring twice",
    trackingNumber: "3SABC123",
    carrier: "PostNL",
    readyAt: "2026-11-20T10:00:00.000Z",
    estimatedReadyAt: "2026-11-20T09:45:00.000Z",
    trackingUrl: "https://shop.example/track/1",
    notes: "Gift",
    conversationId: "conv_9",
    createdAt: "2026-11-21T12:00:00.000Z",
    updatedAt: "2026-11-21T12:40:00.000Z",
  });
  const foreign = orderRow(other.business.id, { createdAt: "2026-11-22T00:00:00.000Z" });
  await insertAll(orders, [...rows, delivery, foreign]);
  const list = (query = "") => call(`/api/v1/orders${query}`, { key: apiKey });

  it("answers { data, has_more } with 25 orders by default, newest first", async () => {
    const response = await list();
    await expect(response).toHaveStatus(200);
    const body = await json<Page>(response);
    expect(Object.keys(body)).toEqual(["data", "has_more"]);
    expect(body).toMatchObject({ has_more: true });
    expect(body.data).toHaveLength(25);
    expect(body.data[0]?.id).toBe(delivery.id);
    const created = body.data.map((o) => o.created_at);
    expect(created).toEqual([...created].sort().reverse());
  });

  it("returns exactly the fields of an order (docs/guides/syncing.md, Booking and order objects)", async () => {
    const body = await json<Page>(await list("?limit=1"));
    expect(Object.keys(body.data[0] ?? {}).sort()).toEqual(ORDER_FIELDS);
    expect(body.data[0]).toEqual({
      id: delivery.id,
      status: "out_for_delivery",
      items: [{ service_id: "svc_bread", name: "Sourdough", qty: 2, unit_price: 4.5 }],
      total: 9,
      pay_on_delivery: true,
      fulfillment_type: "delivery",
      delivery_address: "Keizersgracht 1, Amsterdam",
      delivery_notes: "Ring twice",
      tracking_number: "3SABC123",
      carrier: "PostNL",
      ready_at: "2026-11-20T10:00:00.000Z",
      estimated_ready_at: "2026-11-20T09:45:00.000Z",
      tracking_url: "https://shop.example/track/1",
      client: { name: "Ben Okafor", email: null, phone: "+31687654321" },
      payment: { status: "paid", amount_paid: 9 },
      notes: "Gift",
      conversation_id: "conv_9",
      created_at: "2026-11-21T12:00:00.000Z",
      updated_at: "2026-11-21T12:40:00.000Z",
    });
  });

  it.each([1, 36, 100])("honours limit=%i", async (limit) => {
    expect((await json<Page>(await list(`?limit=${limit}`))).data).toHaveLength(Math.min(limit, 36));
  });

  it.each(["0", "101", "ten", "-5", "1.0"])("refuses limit=%s with 400 naming the parameter", async (limit) => {
    const response = await list(`?limit=${limit}`);
    await expectError(response, 400, 'The query parameter "limit" must be a whole number from 1 to 100.', {
      code: "parameter_invalid",
      param: "limit",
    });
  });

  it.each(STATUSES)("filters by status=%s", async (status) => {
    const body = await json<Page>(await list(`?status=${status}&limit=100`));
    const expected = [...rows, delivery].filter((o) => o.status === status);
    expect(body.data.map((o) => o.id)).toEqual(
      expected.sort((a, b) => b.createdAt.localeCompare(a.createdAt)).map((o) => o.id),
    );
  });

  it.each(["shipped", "no_show", "PENDING"])("refuses status=%s with 400 naming the seven statuses", async (status) => {
    const response = await list(`?status=${status}`);
    await expect(response).toHaveStatus(400);
    expect((await json(response)).error).toBe(
      'The query parameter "status" must be one of "pending", "confirmed", "preparing", "ready_for_pickup", "out_for_delivery", "fulfilled", "cancelled".',
    );
  });

  it("never returns another business's orders", async () => {
    const mine = await json<Page>(await list("?limit=100"));
    expect(mine.data).toHaveLength(36);
    expect(mine.data.map((o) => o.id)).not.toContain(foreign.id);
    const theirs = await json<Page>(await call("/api/v1/orders", { key: other.apiKey }));
    expect(theirs.data.map((o) => o.id)).toEqual([foreign.id]);
  });
});
