import { and, eq, isNull } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { bookings, events, webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import { RETRY_DELAYS_SECONDS } from "../../src/domain/webhooks/attempts";
import { LEASE_MS } from "../../src/domain/webhooks/delivery-claim";
import { endpointsOf } from "../../src/domain/webhooks/endpoints";
import {
  EXTRA_OWED_AFTER_MS,
  markSwept,
  STUCK_AFTER_MS,
  SWEEP_LIMIT,
  sweepOutbox,
  UNENQUEUED_AFTER_MS,
} from "../../src/domain/webhooks/outbox/sweep";
import { writeEvents } from "../../src/domain/webhooks/outbox/write";
import { deps, testDependencies } from "../helpers/dependencies";
import { createBusiness, DEFAULT_SHARD, db, shardD1 } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { bookingObject, reportChange } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { expectServerErrors, quietErrorLines, takeServerErrors } from "../helpers/server-errors";
import { attemptsOf, claimOne, consume, deliveryRow, opaque, outboxOnly, subscribe } from "../helpers/webhooks";

// Every fault the outbox exists for (docs/architecture.md, The outbox), produced for real and survived with nothing
// lost.
const ENDPOINTS = 20;
const brokenQueue = {
  send: () => Promise.reject(new Error("queue unavailable")),
  sendBatch: () => Promise.reject(new Error("queue unavailable")),
} as unknown as Queue;

async function businessWithEndpoints(count: number) {
  const { business, apiKey } = await createBusiness();
  const receivers = [];
  for (let i = 0; i < count; i++) {
    const box = receiverBox(`fault-${i}`);
    receivers.push({ box, endpoint: await subscribe(apiKey, box.url("/hooks")) });
  }
  return { business, apiKey, receivers };
}

const pendingOf = (businessId: string) =>
  db.$count(
    webhookDeliveries,
    and(eq(webhookDeliveries.businessId, businessId), eq(webhookDeliveries.status, "pending")),
  );

describe("the queue down for 1,000 deliveries, then the sweeps", async () => {
  const { business, receivers } = await businessWithEndpoints(ENDPOINTS);

  it("delivers every one exactly once: 50 reports × 20 endpoints", { timeout: 120_000 }, async () => {
    const reports = 1000 / ENDPOINTS;
    // Each refused send logs one warning (50 here, and 10 for the failing sweep): expected, so kept out of the output.
    const warnings = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    for (let i = 0; i < reports; i++) {
      const response = await reportChange(
        business.id,
        { booking: bookingObject(20_000 + i) },
        { WEBHOOK_DELIVERIES: brokenQueue },
      );
      await expect(response).toHaveStatus(201);
    }
    const unenqueued = and(eq(webhookDeliveries.businessId, business.id), isNull(webhookDeliveries.enqueuedAt));
    expect(await db.$count(webhookDeliveries, unenqueued)).toBe(1000);
    // The sends failed a minute ago.
    const written = new Date(Date.now() - UNENQUEUED_AFTER_MS - 1000).toISOString();
    await db.update(webhookDeliveries).set({ createdAt: written }).where(eq(webhookDeliveries.businessId, business.id));

    // Still down at the first sweep: every chunk fails, is released, and nothing is lost or marked.
    expect(await sweepOutbox(testDependencies(DEFAULT_SHARD, { queue: brokenQueue }))).toBe(0);
    expect(await db.$count(webhookDeliveries, unenqueued)).toBe(1000);
    expect(warnings).toHaveBeenCalledTimes(reports + SWEEP_LIMIT / 100);
    warnings.mockRestore();

    // Back: each run takes the oldest SWEEP_LIMIT and the next run the rest, with no error.
    expect(await sweepOutbox(deps)).toBe(SWEEP_LIMIT);
    expect(await db.$count(webhookDeliveries, unenqueued)).toBe(1000 - SWEEP_LIMIT);
    expect(await sweepOutbox(deps)).toBe(1000 - SWEEP_LIMIT);
    expect(await db.$count(webhookDeliveries, unenqueued)).toBe(0);

    await vi.waitFor(async () => expect(await pendingOf(business.id)).toBe(0), { timeout: 100_000, interval: 500 });
    const eventIds = (await db.select({ id: events.id }).from(events).where(eq(events.businessId, business.id))).map(
      (row) => row.id,
    );
    expect(eventIds).toHaveLength(reports);
    for (const { box } of receivers) {
      const received = (await box.recorded()).map((request) => JSON.parse(request.body).id as string);
      expect(received).toHaveLength(reports);
      expect(received.sort()).toEqual([...eventIds].sort());
    }
    const delivered = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.businessId, business.id));
    expect(delivered.every((row) => row.status === "delivered" && row.attemptCount === 1)).toBe(true);
    expect(await sweepOutbox(deps)).toBe(0);
  });
});

describe("a sweep that dies between marking a chunk and sending it", async () => {
  const { business, receivers } = await businessWithEndpoints(1);

  it("leaves the chunk stuck, and a sweep 15 minutes later sends it once", async () => {
    const { deliveryIds } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 2 } } }]);
    const diedAt = Date.now() - STUCK_AFTER_MS - 60_000;
    await db
      .update(webhookDeliveries)
      .set({ createdAt: new Date(diedAt - UNENQUEUED_AFTER_MS).toISOString() })
      .where(eq(webhookDeliveries.businessId, business.id));
    // The run that died: it marked the chunk, and never sent it nor released it.
    await markSwept(deps, deliveryIds, diedAt);
    expect(await sweepOutbox(testDependencies(DEFAULT_SHARD, { clock: () => diedAt + 60_000 }))).toBe(0);
    expect(await sweepOutbox(deps)).toBe(deliveryIds.length);
    await vi.waitFor(async () => expect(await pendingOf(business.id)).toBe(0), { timeout: 10_000 });
    expect(await receivers[0]?.box.recorded()).toHaveLength(1);
  });
});

describe("the consumer's faults, on a driven clock", async () => {
  const { business, apiKey } = await createBusiness();
  // In the future, so that the sweep (on the real clock) never takes these deliveries for lost ones.
  const T0 = Date.parse("2030-01-07T10:00:00.000Z");

  async function deliveryTo(url: string) {
    await subscribe(apiKey, url);
    const { deliveryIds } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 1 } } }]);
    const id = deliveryIds.at(-1);
    if (id === undefined) throw new Error("no delivery written");
    return id;
  }

  it("a receiver down for the first three attempts is delivered on the fourth, at its scheduled time", async () => {
    const box = receiverBox("down-three");
    const id = await deliveryTo(box.url("/fail-first/3"));
    let now = T0;
    const attemptedAt = [];
    for (const delay of RETRY_DELAYS_SECONDS.slice(0, 3)) {
      attemptedAt.push(new Date(now).toISOString());
      expect(await consume(id, now)).toEqual({ acked: false, retryDelay: delay });
      now += delay * 1000;
    }
    // A second early: not yet due, nothing sent.
    expect(await consume(id, now - 10_000)).toEqual({ acked: true, retryDelay: undefined });
    attemptedAt.push(new Date(now).toISOString());
    expect(await consume(id, now)).toEqual({ acked: true, retryDelay: undefined });
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 4 });
    const attempts = await attemptsOf(id);
    expect(attempts.map((attempt) => attempt.statusCode)).toEqual([500, 500, 500, 200]);
    expect(attempts.map((attempt) => attempt.attemptedAt)).toEqual(attemptedAt);
    expect(now - T0).toBe((60 + 300 + 1800) * 1000);
    expect(await box.recorded()).toHaveLength(4);
  });

  it("a consumer that dies between claim and record: attempted once more after the lease, and no more", async () => {
    const box = receiverBox("crash");
    const id = await deliveryTo(box.url("/ok"));
    // The dying consumer: it took the lease and never recorded anything.
    expect(await claimOne(id, T0)).toMatchObject({ id, attemptCount: 0 });
    // The queue's redelivery while the lease still runs sends nothing...
    expect(await consume(id, T0 + LEASE_MS - 1000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(0);
    // ...and once it has run out, the delivery is attempted again, once.
    expect(await consume(id, T0 + LEASE_MS)).toEqual({ acked: true, retryDelay: undefined });
    expect(await consume(id, T0 + LEASE_MS)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(1);
    expect(await attemptsOf(id)).toHaveLength(1);
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 1, leaseUntil: null });
  });

  it("the sweep rescues a crashed delivery whose message is gone, and it is sent once", async () => {
    const box = receiverBox("crash-swept");
    const id = await deliveryTo(box.url("/ok"));
    // The crash happened 16 minutes ago: the lease ran out long since, and the queue gave up on the message.
    const crashedAt = Date.now() - STUCK_AFTER_MS - 60_000;
    await db
      .update(webhookDeliveries)
      .set({ nextAttemptAt: new Date(crashedAt).toISOString(), enqueuedAt: new Date(crashedAt).toISOString() })
      .where(eq(webhookDeliveries.id, id));
    expect(await claimOne(id, crashedAt)).toMatchObject({ id });
    expect(await sweepOutbox(deps)).toBe(1);
    await vi.waitFor(async () => expect((await deliveryRow(id))?.status).toBe("delivered"), { timeout: 10_000 });
    expect(await sweepOutbox(deps)).toBe(0);
    expect(await box.recorded()).toHaveLength(1);
    expect(await attemptsOf(id)).toHaveLength(1);
  });
});

describe("an endpoint removed while a report is on its way", async () => {
  const { business, receivers } = await businessWithEndpoints(3);

  it("stores the event with the other endpoints' deliveries, and none for the removed one", async () => {
    // The report read the three endpoints; the owner removes one before its batch is written.
    const endpoints = await endpointsOf(db, business.id);
    expect(endpoints).toHaveLength(3);
    const removed = receivers[1]?.endpoint.id ?? 0;
    await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, removed));
    const { emitted, deliveryIds } = await writeEvents(
      deps,
      business,
      endpoints,
      opaque([{ event: "review.created", data: { review: { id: 3 } } }]),
    );
    expect(emitted).toHaveLength(1);
    const rows = await db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.eventId, emitted[0]?.id ?? ""));
    expect(rows.map((row) => row.id).sort()).toEqual([...deliveryIds].sort());
    expect(rows.map((row) => row.endpointId).sort()).toEqual(
      [receivers[0]?.endpoint.id, receivers[2]?.endpoint.id].sort(),
    );
  });
});

describe("a D1 error inside a report's batch", async () => {
  const { business, receivers } = await businessWithEndpoints(ENDPOINTS);
  const last = receivers.at(-1)?.endpoint.id;
  // A real failure of D1 in the middle of the batch: the 20th delivery row, in the batch's last statement.
  const injectFault = () =>
    shardD1.exec(
      `CREATE TRIGGER inject_fault BEFORE INSERT ON webhook_deliveries WHEN NEW.endpoint_id = ${last} BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
  const removeFault = () => shardD1.exec("DROP TRIGGER inject_fault");
  const rowsOf = async (bookingId: number) => ({
    events: await db.$count(events, eq(events.businessId, business.id)),
    deliveries: await db.$count(webhookDeliveries, eq(webhookDeliveries.businessId, business.id)),
    snapshot: await db.$count(bookings, eq(bookings.id, bookingId)),
  });

  it("leaves no partial rows, and the same report later emits its event once", async () => {
    expectServerErrors();
    await injectFault();
    const failed = await reportChange(business.id, { booking: bookingObject(30_001) });
    await removeFault();
    await expect(failed).toHaveStatus(500);
    expect(await rowsOf(30_001)).toEqual({ events: 0, deliveries: 0, snapshot: 0 });

    const retried = await reportChange(business.id, { booking: bookingObject(30_001) });
    await expect(retried).toHaveStatus(201);
    expect((await json<{ events: Array<{ event: string }> }>(retried)).events.map((e) => e.event)).toEqual([
      "booking.created",
    ]);
    expect(await rowsOf(30_001)).toEqual({ events: 1, deliveries: ENDPOINTS, snapshot: 1 });
  });

  it("is noticed by the test harness: a 5xx the test did not name fails it", async () => {
    quietErrorLines();
    await injectFault();
    const failed = await reportChange(business.id, { booking: bookingObject(30_002) });
    await removeFault();
    await expect(failed).toHaveStatus(500);
    const { seen, expected } = takeServerErrors();
    expect(expected).toBe(false);
    expect(seen).toEqual([
      expect.stringMatching(/^logged .*"level":"error".*injected fault/),
      `POST /internal/v1/businesses/${business.id}/events answered 500`,
    ]);
  });
});

describe("a redelivery or a recover whose enqueue fails", async () => {
  const { business, apiKey } = await createBusiness();
  const HOUR = 3_600_000;
  const iso = (at: number) => new Date(at).toISOString();

  async function deliveryTo(path: string, row: Partial<typeof webhookDeliveries.$inferInsert>) {
    const box = receiverBox("on-demand");
    const endpoint = await subscribe(apiKey, box.url(path));
    const { deliveryIds } = await outboxOnly(business, [
      { event: "review.created", data: { review: { id: 4 } }, endpointId: endpoint.id },
    ]);
    const id = deliveryIds[0] ?? 0;
    await db.update(webhookDeliveries).set(row).where(eq(webhookDeliveries.id, id));
    return { box, endpoint, id };
  }

  /** As the consumer leaves a delivery after six failed attempts, from 20 hours ago. */
  const failed = () => ({
    status: "failed" as const,
    attemptCount: 6,
    createdAt: iso(Date.now() - 20 * HOUR),
    nextAttemptAt: iso(Date.now() - 5 * HOUR),
    enqueuedAt: iso(Date.now() - 20 * HOUR),
    completedAt: iso(Date.now() - 5 * HOUR),
  });

  /** The refused send: its warning is expected, and kept out of the output. */
  async function withBrokenQueue(path: string, body?: unknown) {
    const warnings = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    try {
      const response = await call(path, {
        key: apiKey,
        method: "POST",
        body,
        bindings: { WEBHOOK_DELIVERIES: brokenQueue },
      });
      await expect(response).toHaveStatus(202);
      expect(warnings).toHaveBeenCalledWith(expect.stringContaining("enqueue failed; the outbox sweep will retry"));
      return response;
    } finally {
      warnings.mockRestore();
    }
  }

  /** The extra attempt as if asked for a minute ago: what the sweep takes for a message never sent, or lost. */
  const owedForAMinute = (id: number) =>
    db
      .update(webhookDeliveries)
      .set({ extraAttemptAt: iso(Date.now() - EXTRA_OWED_AFTER_MS - 1000) })
      .where(eq(webhookDeliveries.id, id));

  it("keeps a redelivery owed on the row, and the sweep sends it, once, when it has been owed a minute", async () => {
    const { box, endpoint, id } = await deliveryTo("/ok", failed());
    await withBrokenQueue(`/api/v1/webhooks/${endpoint.id}/deliveries/${id}/redeliver`);
    expect((await deliveryRow(id))?.extraAttemptAt).not.toBeNull();
    // Within the minute its message may still be on its way: the sweep leaves it.
    expect(await sweepOutbox(deps)).toBe(0);
    await owedForAMinute(id);
    expect(await sweepOutbox(deps)).toBe(1);
    await vi.waitFor(async () => expect((await deliveryRow(id))?.extraAttemptAt).toBeNull(), { timeout: 10_000 });
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 6 });
    const requests = await box.recorded();
    expect(requests.map((request) => request.headers["x-service-delivery"])).toEqual([String(id)]);
    expect(await sweepOutbox(deps)).toBe(0);
    expect(await attemptsOf(id)).toHaveLength(1);
  });

  it("sends a recover's pending delivery at the next sweep, and its failed one once it has been owed a minute", async () => {
    const lost = await deliveryTo("/ok", failed());
    // Failed once an hour ago, its next attempt still ahead.
    const pending = await deliveryTo("/ok", {
      attemptCount: 1,
      createdAt: iso(Date.now() - HOUR),
      nextAttemptAt: iso(Date.now() + 10 * 60_000),
      enqueuedAt: iso(Date.now() - HOUR),
    });
    for (const { endpoint } of [lost, pending]) {
      const response = await withBrokenQueue(`/api/v1/webhooks/${endpoint.id}/recover`, {
        since: iso(Date.now() - 24 * HOUR),
      });
      expect(await json(response)).toEqual({ queued: 1 });
    }
    // The pending one is due now and not enqueued, as a new outbox row: the next sweep sends it.
    expect(await deliveryRow(pending.id)).toMatchObject({ status: "pending", enqueuedAt: null });
    expect(await sweepOutbox(deps)).toBe(1);
    await vi.waitFor(async () => expect((await deliveryRow(pending.id))?.status).toBe("delivered"), {
      timeout: 10_000,
    });
    expect(await deliveryRow(pending.id)).toMatchObject({ attemptCount: 2 });
    await owedForAMinute(lost.id);
    expect(await sweepOutbox(deps)).toBe(1);
    await vi.waitFor(async () => expect((await deliveryRow(lost.id))?.status).toBe("delivered"), { timeout: 10_000 });
    expect(await sweepOutbox(deps)).toBe(0);
    expect(await lost.box.recorded()).toHaveLength(1);
    expect(await pending.box.recorded()).toHaveLength(1);
  });
});
