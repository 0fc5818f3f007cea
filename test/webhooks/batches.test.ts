import { env } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { app } from "../../src/app";
import { webhookDeliveries } from "../../src/db/schema";
import { LEASE_MS } from "../../src/domain/webhooks/delivery-claim";
import { sendDeliveries } from "../../src/domain/webhooks/outbox/enqueue";
import { countingD1 } from "../helpers/counting-d1";
import { deps } from "../helpers/dependencies";
import { createBusiness, db, SHARD_D1_BINDING, shardD1 } from "../helpers/fixtures";
import { receiverBox } from "../helpers/receiver";
import { expectServerErrors, takeServerErrors } from "../helpers/server-errors";
import { attemptsOf, claimOne, consumeBatch, deliveryRow, outboxOnly, subscribe } from "../helpers/webhooks";

// The consumer takes a queue batch at a time (docs/architecture.md, Performance budget: "two round trips per queue
// batch, not per delivery"): one D1 batch claims every message's delivery, one more records every attempt.

// The consumer's clock: in the future, so that a sweep (on the real clock) never takes these deliveries for lost ones.
const T0 = Date.parse("2030-01-07T10:00:00.000Z");

/** A business with one endpoint per path, and one event to all of them: its deliveries, in the paths' order. */
async function deliveriesTo(prefix: string, paths: string[]) {
  const { business, apiKey } = await createBusiness();
  const receivers = [];
  for (const [i, path] of paths.entries()) {
    const box = receiverBox(`${prefix}-${i}`);
    receivers.push({ box, endpoint: await subscribe(apiKey, box.url(path)) });
  }
  const { deliveryIds } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 1 } } }]);
  const rows = await Promise.all(deliveryIds.map(deliveryRow));
  const ids = receivers.map(({ endpoint }) => rows.find((row) => row?.endpointId === endpoint.id)?.id ?? 0);
  return { apiKey, ids, boxes: receivers.map(({ box }) => box), endpoints: receivers.map(({ endpoint }) => endpoint) };
}

const sentCounts = (boxes: Array<{ recorded: () => Promise<unknown[]> }>) =>
  Promise.all(boxes.map(async (box) => (await box.recorded()).length));

describe("the consumer, a queue batch at a time", () => {
  it("takes two D1 round trips for a batch of 10: one claim, one record; acks 9 and retries the failure", async () => {
    const paths = [...Array.from({ length: 9 }, () => "/ok"), "/status/500"];
    const { ids, boxes } = await deliveriesTo("batch", paths);
    const { d1, trips } = countingD1(shardD1);

    const results = await consumeBatch(ids, T0, { bindings: { [SHARD_D1_BINDING]: d1 } });

    // The claim: the scheduled attempts' lease update, the extra attempts' (none here), the deliveries' read and their
    // events' envelopes, once each; the record: an
    // attempt insert and a delivery update per delivery, and the endpoints' health: one statement for the successes,
    // one for the failures (src/domain/webhooks/health.ts).
    expect(trips).toEqual(["batch of 4", "batch of 22"]);
    expect(results).toEqual([
      ...Array.from({ length: 9 }, () => ({ acked: true, retryDelay: undefined })),
      { acked: false, retryDelay: 60 },
    ]);
    expect(await sentCounts(boxes)).toEqual(Array.from({ length: 10 }, () => 1));
    const attempts = (await Promise.all(ids.map(attemptsOf))).flat();
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([...Array.from({ length: 9 }, () => 200), 500]);
    expect(attempts.every((attempt) => attempt.attemptedAt === new Date(T0).toISOString())).toBe(true);
    const rows = await Promise.all(ids.map(deliveryRow));
    expect(rows.slice(0, 9).every((row) => row?.status === "delivered" && row.attemptCount === 1)).toBe(true);
    expect(rows[9]).toMatchObject({
      status: "pending",
      attemptCount: 1,
      nextAttemptAt: new Date(T0 + 60_000).toISOString(),
      leaseUntil: null,
    });
  });

  it("sends a delivery once when the batch holds its message twice", async () => {
    const { ids, boxes } = await deliveriesTo("twice", ["/ok", "/ok"]);
    const [first, second] = ids as [number, number];
    const results = await consumeBatch([first, second, first], T0);
    expect(results.every((result) => result.acked && result.retryDelay === undefined)).toBe(true);
    expect(await sentCounts(boxes)).toEqual([1, 1]);
    expect(await attemptsOf(first)).toHaveLength(1);
    expect(await deliveryRow(first)).toMatchObject({ status: "delivered", attemptCount: 1 });
  });

  it("sends the others when one delivery of the batch is leased by another consumer", async () => {
    const { ids, boxes } = await deliveriesTo("leased", ["/ok", "/ok", "/ok"]);
    const leased = ids[1] ?? 0;
    expect(await claimOne(leased, T0)).toMatchObject({ id: leased });
    const results = await consumeBatch(ids, T0 + 1000);
    expect(results.every((result) => result.acked && result.retryDelay === undefined)).toBe(true);
    expect(await sentCounts(boxes)).toEqual([1, 0, 1]);
    expect(await attemptsOf(leased)).toHaveLength(0);
    expect(await deliveryRow(leased)).toMatchObject({
      status: "pending",
      attemptCount: 0,
      leaseUntil: new Date(T0 + LEASE_MS).toISOString(),
    });
  });

  it("records the others when an endpoint is deleted while its delivery is being sent", async () => {
    // The second receiver keeps its request unanswered until the endpoint is deleted.
    const { apiKey, ids, boxes, endpoints } = await deliveriesTo("deleted", ["/ok", "/hold/1", "/ok"]);
    const consumed = consumeBatch(ids, T0);
    await vi.waitFor(async () => expect((await boxes[1]?.recorded())?.length).toBe(1), { interval: 20 });
    const deleted = await app.request(
      `/api/v1/webhooks/${endpoints[1]?.id}`,
      { method: "DELETE", headers: { Authorization: `Bearer ${apiKey}` } },
      env,
    );
    await expect(deleted).toHaveStatus(204);
    await boxes[1]?.release();
    expect((await consumed).every((result) => result.acked)).toBe(true);
    expect(await deliveryRow(ids[1] ?? 0)).toBeUndefined();
    for (const id of [ids[0] ?? 0, ids[2] ?? 0]) {
      expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 1 });
      expect(await attemptsOf(id)).toHaveLength(1);
    }
  });

  it("loses nothing when the record fails: every delivery is sent again once its lease runs out", async () => {
    const { ids, boxes } = await deliveriesTo("unrecorded", ["/ok", "/ok", "/ok"]);
    // A real D1 failure inside the recording batch, on the second delivery's attempt only: the batch is one
    // transaction, so no attempt of it is recorded.
    await shardD1.exec(
      `CREATE TRIGGER unrecorded_fault BEFORE INSERT ON delivery_attempts WHEN NEW.delivery_id = ${ids[1]} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
    expectServerErrors();
    try {
      // Sent, not recorded: each message comes back when the leases run out, not at once (a redelivery within the
      // lease would find the delivery leased, ack it, and leave it to the sweep 15 minutes later).
      expect(await consumeBatch(ids, T0)).toEqual(ids.map(() => ({ acked: false, retryDelay: LEASE_MS / 1000 })));
    } finally {
      await shardD1.exec("DROP TRIGGER unrecorded_fault");
    }
    expect(takeServerErrors().seen).toEqual([
      expect.stringMatching(/^logged .*"step":"record delivery attempts","deliveries":3,.*injected fault/),
    ]);
    expect(await sentCounts(boxes)).toEqual([1, 1, 1]);
    for (const id of ids) {
      expect(await attemptsOf(id)).toHaveLength(0);
      expect(await deliveryRow(id)).toMatchObject({
        status: "pending",
        attemptCount: 0,
        leaseUntil: new Date(T0 + LEASE_MS).toISOString(),
      });
    }

    // A duplicate message within the lease sends nothing...
    expect(await consumeBatch(ids, T0 + LEASE_MS - 1000)).toEqual(
      ids.map(() => ({ acked: true, retryDelay: undefined })),
    );
    expect(await sentCounts(boxes)).toEqual([1, 1, 1]);
    // ...and the retried messages, once it has run out, send and record each delivery: the receivers see the same
    // delivery twice (docs/webhooks.md: "The same event can arrive more than once"), and the history one attempt.
    expect(await consumeBatch(ids, T0 + LEASE_MS)).toEqual(ids.map(() => ({ acked: true, retryDelay: undefined })));
    expect(await sentCounts(boxes)).toEqual([2, 2, 2]);
    for (const [i, id] of ids.entries()) {
      const deliveryHeaders = (await boxes[i]?.recorded())?.map((request) => request.headers["x-service-delivery"]);
      expect(deliveryHeaders).toEqual([String(id), String(id)]);
      expect(await attemptsOf(id)).toHaveLength(1);
      expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 1, leaseUntil: null });
    }
  });
});

describe("throughput through the real queue", async () => {
  const { business, apiKey } = await createBusiness();
  for (let i = 0; i < 20; i++) await subscribe(apiKey, receiverBox(`throughput-${i}`).url("/ok"));

  // A measurement more than a test (the figures are in docs/reliability.md); the bound only catches a collapse.
  it("delivers 200 deliveries (10 events × 20 endpoints) sent to the queue", { timeout: 60_000 }, async () => {
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) {
      ids.push(...(await outboxOnly(business, [{ event: "review.created", data: { review: { id: i } } }])).deliveryIds);
    }
    expect(ids).toHaveLength(200);
    const pending = and(eq(webhookDeliveries.businessId, business.id), eq(webhookDeliveries.status, "pending"));
    const started = Date.now();
    for (let i = 0; i < ids.length; i += 100) await sendDeliveries(deps, ids.slice(i, i + 100));
    await vi.waitFor(async () => expect(await db.$count(webhookDeliveries, pending)).toBe(0), {
      timeout: 50_000,
      interval: 20,
    });
    const seconds = (Date.now() - started) / 1000;
    expect(seconds, `200 deliveries in ${seconds.toFixed(2)} s: ${Math.round(200 / seconds)} a second`).toBeLessThan(
      20,
    );
    // Nothing marked them enqueued but their claims (docs/architecture.md, The outbox): every one of the 200 is.
    const rows = await db
      .select({ enqueuedAt: webhookDeliveries.enqueuedAt })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.businessId, business.id));
    expect(rows.filter((row) => row.enqueuedAt === null)).toEqual([]);
    expect(rows.length).toBeGreaterThanOrEqual(200);
  });
});
