import { and, eq, inArray, sql } from "drizzle-orm";
import Stripe from "stripe";
import { describe, expect, it, vi } from "vitest";
import { MAX_BOUND_PARAMETERS, statementsThatFit } from "../../src/db/batches";
import { bookings, events, orders, webhookDeliveries } from "../../src/db/schema";
import { reservation } from "../../src/domain/actions/call-reservation";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { KNOWLEDGE_BUDGET_CHARS } from "../../src/domain/knowledge/for-secretary";
import { toBookingRow } from "../../src/domain/platform/bookings";
import { toOrderRow } from "../../src/domain/platform/orders";
import { snapshotStatements } from "../../src/domain/platform/snapshot-statements";
import { deps } from "../helpers/dependencies";
import { bookingRow, createBusiness, db, insertAll, orderRow } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { createIntake, runtimeIntake } from "../helpers/intakes";
import { bookingObject, reportChange } from "../helpers/platform";
import { newOrder } from "../helpers/platform-changes";
import { receiverBox } from "../helpers/receiver";
import { verifyWebhookSignature } from "../helpers/verify-signature";
import { subscribe } from "../helpers/webhooks";

// Every per-business limit (docs/architecture.md, Principals and owner sides; docs/guides/knowledge.md, Limits), at its
// maximum, through HTTP, the real queue and the real receiver.
const MAX_ENDPOINTS = 20;
const stripe = new Stripe("sk_test_unused");

/** A business with 20 endpoints, each on its own receiver box, subscribed to `events`. */
async function twentyEndpoints(name: string, events?: string[]) {
  const { business, apiKey } = await createBusiness({ name });
  const receivers = [];
  for (let i = 0; i < MAX_ENDPOINTS; i++) {
    const box = receiverBox(`${name.toLowerCase().replaceAll(" ", "-")}-${i}`);
    receivers.push({ box, endpoint: await subscribe(apiKey, box.url("/hooks"), events) });
  }
  const refused = await call("/api/v1/webhooks", {
    key: apiKey,
    method: "POST",
    body: { url: receivers[0]?.box.url() },
  });
  await expect(refused).toHaveStatus(403);
  return { business, apiKey, receivers };
}

/** Waits until every box has received `count` requests, and answers them per box. */
async function receivedBy(receivers: Array<{ box: ReturnType<typeof receiverBox> }>, count: number) {
  return vi.waitFor(
    async () => {
      const recorded = await Promise.all(receivers.map(({ box }) => box.recorded()));
      const short = recorded.filter((requests) => requests.length < count).length;
      if (short > 0) throw new Error(`${short} receivers have fewer than ${count} requests`);
      return recorded;
    },
    { timeout: 20_000, interval: 200 },
  );
}

describe("statements that fit D1's 100 bound parameters", () => {
  const deliveryRow = (endpointId: number) => ({
    businessId: "b",
    eventId: "evt_x",
    endpointId,
    status: "pending" as const,
    nextAttemptAt: "2026-01-01T00:00:00.000Z",
    createdAt: "2026-01-01T00:00:00.000Z",
  });

  it("splits by what drizzle binds, not by object keys: 60 delivery rows of 6 keys bind 7 parameters each", () => {
    const rows = Array.from({ length: 60 }, (_, i) => deliveryRow(i + 1));
    const [one] = statementsThatFit([deliveryRow(1)], (slice) => db.insert(webhookDeliveries).values(slice));
    expect(one?.toSQL().params).toHaveLength(7);
    const statements = statementsThatFit(rows, (slice) =>
      db.insert(webhookDeliveries).values(slice).returning({ id: webhookDeliveries.id }),
    );
    const bound = statements.map((statement) => statement.toSQL().params.length);
    expect(Math.max(...bound)).toBeLessThanOrEqual(MAX_BOUND_PARAMETERS);
    expect(bound.reduce((sum, n) => sum + n, 0)).toBe(60 * 7);
    // Every row once, in order.
    const endpointIds = statements.flatMap((statement) =>
      statement
        .toSQL()
        .params.filter((_, i) => i % 7 === 2)
        .map(Number),
    );
    expect(endpointIds).toEqual(rows.map((row) => row.endpointId));
  });

  it("splits IN (...) lists with the statement's other parameters counted: 1,000 ids beside two values", () => {
    const ids = Array.from({ length: 1000 }, (_, i) => i + 1);
    const statements = statementsThatFit(ids, (slice) =>
      db
        .update(webhookDeliveries)
        .set({ enqueuedAt: "2026-01-01T00:00:00.000Z" })
        .where(and(inArray(webhookDeliveries.id, slice), eq(webhookDeliveries.status, "pending"))),
    );
    const bound = statements.map((statement) => statement.toSQL().params.length);
    expect(Math.max(...bound)).toBeLessThanOrEqual(MAX_BOUND_PARAMETERS);
    expect(bound.reduce((sum, n) => sum + n - 2, 0)).toBe(1000);
    expect(statementsThatFit([], (slice) => db.select().from(events).where(inArray(events.id, slice)))).toEqual([]);
  });

  it("a report's snapshot, stored whole, binds each of its columns twice: 56 parameters for a booking", () => {
    const booking = { ...toBookingRow("biz_x", bookingObject(1), "2026-01-01T00:00:00.000Z"), reportToken: "rpt_x" };
    const order = { ...toOrderRow("biz_x", newOrder(), "2026-01-01T00:00:00.000Z"), reportToken: "rpt_x" };
    const bound = (table: typeof bookings | typeof orders, row: Record<string, unknown>) =>
      snapshotStatements(table).upsert(row).prepared(db).query.params.length;
    expect(bound(bookings, booking)).toBe(56);
    expect(bound(orders, order)).toBe(2 * Object.keys(order).length);
    expect(bound(orders, order)).toBeLessThanOrEqual(MAX_BOUND_PARAMETERS);
  });

  it("an action call's reservation binds 12 parameters, whatever its arguments", () => {
    const request = { conversationId: "c", messageId: "m", channel: "sms" as const, arguments: { a: 1, b: "x" } };
    expect(reservation("biz_x", "book_check", request, 0).prepared(db).query.params).toHaveLength(12);
  });

  it("refuses an item that alone binds more than D1 allows, instead of sending a statement that fails", () => {
    const wide = { ...deliveryRow(1), eventId: sql`${Array.from({ length: MAX_BOUND_PARAMETERS }, String)}` };
    expect(() => statementsThatFit([wide], (slice) => db.insert(webhookDeliveries).values(slice))).toThrow(RangeError);
  });
});

describe("20 endpoints receive every event of a report (docs/guides/webhooks.md, Subscribing)", async () => {
  const { business, receivers } = await twentyEndpoints("Twenty Hooks");

  it("a booking report answers 201; each endpoint receives it exactly once, signed with its own secret", async () => {
    const response = await reportChange(business.id, { booking: bookingObject(9001, { conversation_id: "conv_1" }) });
    await expect(response).toHaveStatus(201);
    const [{ id: eventId }] = (await json<{ events: [{ id: string }] }>(response)).events;
    const recorded = await receivedBy(receivers, 1);
    for (const [i, requests] of recorded.entries()) {
      expect(requests).toHaveLength(1);
      const [request] = requests;
      const secret = receivers[i]?.endpoint.secret ?? "";
      const otherSecret = receivers[(i + 1) % MAX_ENDPOINTS]?.endpoint.secret ?? "";
      const body = request?.body ?? "";
      const signature = request?.headers["x-service-signature"] ?? "";
      expect(JSON.parse(body)).toMatchObject({ id: eventId, event: "booking.created" });
      const verified = await stripe.webhooks.constructEventAsync(
        body,
        signature,
        secret,
        300,
        Stripe.createSubtleCryptoProvider(),
      );
      expect(verified.id).toBe(eventId);
      expect(await verifyWebhookSignature(body, signature, otherSecret)).toBe(false);
    }
    await vi.waitFor(async () => {
      const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId));
      expect(rows).toHaveLength(MAX_ENDPOINTS);
      expect(rows.every((row) => row.status === "delivered" && row.attemptCount === 1)).toBe(true);
    });
  });

  it("the largest report (rescheduled, completed and paid at once) writes 3 × 20 deliveries in one batch", async () => {
    await reportChange(business.id, { booking: bookingObject(9002, { conversation_id: "conv_1" }) });
    await receivedBy(receivers, 2);
    const paid = {
      event: "payment.received",
      data: {
        kind: "booking",
        amount: 20,
        currency: "EUR",
        reference: "pay_1",
        booking: bookingObject(9002, { date: "2026-12-04", status: "completed", conversation_id: "conv_1" }),
      },
    };
    const response = await reportChange(business.id, paid);
    await expect(response).toHaveStatus(201);
    const emitted = (await json<{ events: Array<{ id: string; event: string }> }>(response)).events;
    expect(emitted.map((e) => e.event)).toEqual(["booking.rescheduled", "booking.completed", "payment.received"]);
    const recorded = await receivedBy(receivers, 5);
    for (const requests of recorded) {
      const received = requests.slice(2).map((request) => JSON.parse(request.body).id as string);
      expect(received.sort()).toEqual(emitted.map((e) => e.id).sort());
    }
    for (const { id } of emitted) {
      expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.eventId, id))).toBe(MAX_ENDPOINTS);
    }
  });
});

describe('an intake\'s owner with 20 endpoints naming intake.completed (docs/guides/intakes.md, "intake.completed")', async () => {
  const { business, apiKey, receivers } = await twentyEndpoints("Twenty Intakes", ["intake.completed"]);
  const intake = await createIntake(apiKey, {
    fields: [{ id: "full_name", label: "What is your name?", type: "text", required: true }],
  });
  await switchIntakeOn(deps, business.id, intake.id);

  it("receives the completion on all 20, once each", async () => {
    const cid = `conv-${crypto.randomUUID()}`;
    const runtime = runtimeIntake(business);
    const started = await runtime.start(cid, {
      intake_id: intake.id,
      channel: "whatsapp",
      customer: { phone: "+31612345678" },
    });
    await expect(started).toHaveStatus(201);
    const done = await runtime.answer(cid, { full_name: "Mo Ali" });
    expect(await json(done)).toMatchObject({ status: "completed" });
    const recorded = await receivedBy(receivers, 1);
    const eventIds = new Set(recorded.map(([request]) => JSON.parse(request?.body ?? "{}").id));
    expect(eventIds.size).toBe(1);
    for (const requests of recorded) {
      expect(requests).toHaveLength(1);
      expect(requests[0]?.headers["x-service-event"]).toBe("intake.completed");
    }
  });
});

describe("the other per-business maxima, through HTTP", async () => {
  const { business, apiKey } = await createBusiness({ plan: "business" });
  const context = async (channel = "whatsapp") =>
    json<{
      actions: Array<{ name: string }>;
      knowledge: { chars: number; sections: Array<{ kind: string; key?: string }> };
    }>(await call(`/internal/v1/businesses/${business.id}/context?channel=${channel}`, { headers: RUNTIME }));

  it("10 actions, all switched on, are all in the context; an 11th is refused", async () => {
    for (let i = 0; i < 10; i++) {
      const created = await call("/api/v1/actions", {
        key: apiKey,
        method: "POST",
        body: {
          name: `lookup_${i}`,
          title: `Lookup ${i}`,
          description: "Checks which appointment slots are free on a given day, for customers asking.",
          url: `https://partner.example/actions/${i}`,
          parameters: { type: "object", properties: {} },
        },
      });
      await expect(created).toHaveStatus(201);
      await switchAction(deps, business.id, (await json<{ id: number }>(created)).id, true);
    }
    const eleventh = await call("/api/v1/actions", {
      key: apiKey,
      method: "POST",
      body: {
        name: "lookup_10",
        title: "Lookup 10",
        description: "Checks which appointment slots are free on a given day, for customers asking.",
        url: "https://partner.example/actions/10",
        parameters: { type: "object", properties: {} },
      },
    });
    await expect(eleventh).toHaveStatus(403);
    const { actions } = await context();
    expect(actions.map((action) => action.name).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `lookup_${i}`).sort(),
    );
  });

  it("a knowledge context at its 16,000-character budget", async () => {
    for (const key of ["full-a", "full-b", "full-c"]) {
      const pushed = await call(`/api/v1/knowledge/${key}`, {
        key: apiKey,
        method: "PUT",
        body: { title: key, content: key.at(-1)?.repeat(8000) },
      });
      await expect(pushed).toHaveStatus(201);
    }
    const { knowledge } = await context();
    expect(knowledge.chars).toBe(KNOWLEDGE_BUDGET_CHARS);
    expect(knowledge.sections.filter((s) => s.kind === "connected_app_information").map((s) => s.key)).toEqual([
      "full-c",
      "full-b",
    ]);
  });

  it("pages of 100 appointments and 100 orders, newest first, out of 150 of each", async () => {
    await insertAll(
      bookings,
      Array.from({ length: 150 }, (_, i) =>
        bookingRow(business.id, { date: `2027-01-${String((i % 28) + 1).padStart(2, "0")}` }),
      ),
    );
    await insertAll(
      orders,
      Array.from({ length: 150 }, () => orderRow(business.id)),
    );
    for (const path of ["/api/v1/appointments?limit=100", "/api/v1/orders?limit=100"]) {
      const response = await call(path, { key: apiKey });
      await expect(response).toHaveStatus(200);
      const { data } = await json<{ data: Array<{ id: number }> }>(response);
      expect(data).toHaveLength(100);
      expect(new Set(data.map((item) => item.id)).size).toBe(100);
    }
  });
});
