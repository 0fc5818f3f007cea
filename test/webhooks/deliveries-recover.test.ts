import { eq, fillPlaceholders, inArray } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { events, webhookDeliveries } from "../../src/db/schema";
import { RETRY_DELAYS_SECONDS } from "../../src/domain/webhooks/attempts";
import { RECOVERS_PER_HOUR } from "../../src/domain/webhooks/endpoint-budgets";
import { KEPT_FOR_MS } from "../../src/domain/webhooks/event-log";
import { recoverWrites } from "../../src/domain/webhooks/recovery";
import {
  deliveriesPath,
  deliveriesTo,
  failAllAttempts,
  HOUR,
  happenedAt,
  iso,
  listDeliveries,
  recordingQueue,
  recover,
  recoverPath,
  redeliverPath,
} from "../helpers/deliveries-api";
import { createApiKey, createBusiness, db, shardD1 } from "../helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "../helpers/http";
import { apiKeyPrincipal } from "../helpers/principals";
import { queryPlan } from "../helpers/query-plan";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";
import { receiverBox } from "../helpers/receiver";
import { roundTrips } from "../helpers/round-trips";
import { verifyWebhookSignature } from "../helpers/verify-signature";
import { attemptsOf, consume, deliveryRow, subscribe } from "../helpers/webhooks";

// docs/webhooks.md, Deliveries, redelivery and recovery: deliveries of one endpoint, for its owner side only: the list
// with every attempt, a redelivery now, and recover of everything that failed since a time; both through the outbox and
// the real queue.

describe("POST /webhooks/{id}/recover", async () => {
  /** The delivery's row as the consumer leaves it after six failed attempts, from `at` (a fixture). */
  const failedFixture = (ids: number[], at: number) =>
    db
      .update(webhookDeliveries)
      .set({ status: "failed", attemptCount: 6, createdAt: iso(at), completedAt: iso(at + 15 * HOUR) })
      .where(inArray(webhookDeliveries.id, ids));

  it("sends at once what a receiver back up missed: failed deliveries, and pending ones that failed; counts both", async () => {
    const { business, apiKey } = await createBusiness();
    const box = receiverBox("back-up");
    // Down for the eleven attempts below, then up.
    const endpoint = await subscribe(apiKey, box.url("/fail-first/11"), ["lead.created"]);
    const now = Date.now();
    // Failed: its six attempts over 15 hours, from 20 hours ago.
    const failed = await deliveriesTo(business, endpoint.id, 1);
    const [failedId = 0] = failed.deliveryIds;
    await happenedAt(failed.deliveryIds, now - 20 * HOUR);
    await failAllAttempts(failed.deliveryIds, now - 20 * HOUR);
    // Pending after five failed attempts from 3 hours ago: its sixth and last is due in more than 11 hours.
    const pending = await deliveriesTo(business, endpoint.id, 1);
    const [pendingId = 0] = pending.deliveryIds;
    await happenedAt(pending.deliveryIds, now - 3 * HOUR);
    let at = now - 3 * HOUR;
    for (const delay of RETRY_DELAYS_SECONDS) {
      expect(await consume(pendingId, at)).toEqual({ acked: false, retryDelay: delay });
      at += delay * 1000;
    }
    expect(await deliveryRow(pendingId)).toMatchObject({ status: "pending", attemptCount: 5, nextAttemptAt: iso(at) });
    expect(at).toBeGreaterThan(now + 11 * HOUR);
    // Delivered an hour ago, never attempted yet (on its way: its own message sends it), and failed but written before
    // `since`: none is the recover's.
    const delivered = await deliveriesTo(business, endpoint.id, 1);
    await happenedAt(delivered.deliveryIds, now - 2 * HOUR);
    await db
      .update(webhookDeliveries)
      .set({ status: "delivered", attemptCount: 1, completedAt: iso(now - HOUR) })
      .where(inArray(webhookDeliveries.id, delivered.deliveryIds));
    const fresh = await deliveriesTo(business, endpoint.id, 1);
    const older = await deliveriesTo(business, endpoint.id, 1);
    await failedFixture(older.deliveryIds, now - 26 * HOUR);
    const untouched = [...delivered.deliveryIds, ...fresh.deliveryIds, ...older.deliveryIds];
    const rowsBefore = await Promise.all(untouched.map(deliveryRow));

    const response = await recover(apiKey, endpoint.id, iso(now - 24 * HOUR));
    await expect(response).toHaveStatus(202);
    expect(await json(response)).toEqual({ queued: 2 });
    expect(response.headers.get("RateLimit-Policy")).toBe(
      `"requests";q=600;w=60, "webhook_recovers";q=${RECOVERS_PER_HOUR};w=3600`,
    );
    expect(response.headers.get("RateLimit")).toMatch(
      new RegExp(`^"webhook_recovers";r=${RECOVERS_PER_HOUR - 1};t=\\d+$`),
    );

    // The receiver gets both at once, each as its own delivery, signed now.
    const recovered = (await box.arrived(13)).slice(11);
    expect(recovered.map((request) => Number(request.headers["x-service-delivery"])).sort()).toEqual(
      [failedId, pendingId].sort(),
    );
    expect(recovered.map((request) => JSON.parse(request.body).id).sort()).toEqual(
      [...failed.eventIds, ...pending.eventIds].sort(),
    );
    for (const request of recovered) {
      expect(
        await verifyWebhookSignature(request.body, request.headers["x-service-signature"] ?? "", endpoint.secret),
      ).toBe(true);
    }
    await vi.waitFor(
      async () => {
        const page = await listDeliveries(apiKey, endpoint.id, "?status=delivered");
        expect(page.data.map((delivery) => delivery.id).sort()).toEqual(
          [...delivered.deliveryIds, failedId, pendingId].sort(),
        );
      },
      { timeout: 10_000, interval: 100 },
    );
    // The failed one had one attempt more, outside its schedule; the pending one its sixth, brought forward.
    expect(await deliveryRow(failedId)).toMatchObject({ status: "delivered", attemptCount: 6, extraAttemptAt: null });
    expect((await attemptsOf(failedId)).map((attempt) => attempt.statusCode)).toEqual([
      500, 500, 500, 500, 500, 500, 200,
    ]);
    expect(await deliveryRow(pendingId)).toMatchObject({ status: "delivered", attemptCount: 6 });
    expect((await attemptsOf(pendingId)).map((attempt) => attempt.statusCode)).toEqual([500, 500, 500, 500, 500, 200]);
    // Nothing else was sent or changed, and no delivery was added.
    expect(await box.recorded()).toHaveLength(13);
    expect(await Promise.all(untouched.map(deliveryRow))).toEqual(rowsBefore);
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, endpoint.id))).toBe(5);

    // Asked again, nothing is left to send.
    expect(await json(await recover(apiKey, endpoint.id, iso(now - 24 * HOUR)))).toEqual({ queued: 0 });
  });

  it("goes on with a pending delivery's schedule from the attempt it brought forward, and leaves a failed one failed", async () => {
    const { business, apiKey } = await createBusiness();
    const box = receiverBox("still-down");
    const endpoint = await subscribe(apiKey, box.url("/status/500"), ["lead.created"]);
    const now = Date.now();
    const failed = await deliveriesTo(business, endpoint.id, 1);
    const [failedId = 0] = failed.deliveryIds;
    await happenedAt(failed.deliveryIds, now - 20 * HOUR);
    await failAllAttempts(failed.deliveryIds, now - 20 * HOUR);
    const failedBefore = await deliveryRow(failedId);
    // Failed once just now: its second attempt is a minute away.
    const pending = await deliveriesTo(business, endpoint.id, 1);
    const [pendingId = 0] = pending.deliveryIds;
    expect(await consume(pendingId, now)).toEqual({ acked: false, retryDelay: 60 });

    expect(await json(await recover(apiKey, endpoint.id, iso(now - 24 * HOUR)))).toEqual({ queued: 2 });
    await box.arrived(9);
    const attempts = await vi.waitFor(
      async () => {
        const recorded = await attemptsOf(pendingId);
        expect(recorded).toHaveLength(2);
        return recorded;
      },
      { timeout: 10_000, interval: 100 },
    );
    // Its second attempt, made now, counts: the next is 5 minutes after it, as the schedule says after a second one.
    const second = attempts[1];
    expect(second?.statusCode).toBe(500);
    expect(await deliveryRow(pendingId)).toMatchObject({
      status: "pending",
      attemptCount: 2,
      nextAttemptAt: iso(
        Date.parse(second?.attemptedAt ?? "") + (second?.durationMs ?? 0) + RETRY_DELAYS_SECONDS[1] * 1000,
      ),
    });
    // The failed one: one attempt more, and failed as it was.
    const failedAfter = await vi.waitFor(
      async () => {
        const row = await deliveryRow(failedId);
        expect(row?.extraAttemptAt).toBeNull();
        return row;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(failedAfter).toEqual({ ...failedBefore, enqueuedAt: expect.any(String) });
    expect(await attemptsOf(failedId)).toHaveLength(7);
  });

  it("asks for 3,000 failed deliveries in one write: two round trips, 30 queue batches, and no write after them", async () => {
    const { business, apiKey } = await createBusiness();
    const endpoint = await subscribe(apiKey, "https://partner.example/big", ["lead.created"]);
    const COUNT = 3000;
    const at = iso(Date.now() - 5 * HOUR);
    const failedAt = iso(Date.now() - 2 * HOUR);
    const prefix = `evt_bulk${crypto.randomUUID().slice(0, 8)}_`;
    // A month's failures, written as the consumer leaves them (the fixture, in two statements).
    await shardD1
      .prepare(
        `insert into events (id, business_id, type, envelope, audience, created_at)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
       select ?2 || i, ?3, 'lead.created', json_object('id', ?2 || i, 'event', 'lead.created'), null, ?4 from n`,
      )
      .bind(COUNT, prefix, business.id, at)
      .run();
    await shardD1
      .prepare(
        `insert into webhook_deliveries (business_id, event_id, endpoint_id, status, attempt_count, next_attempt_at, completed_at, created_at)
       select business_id, id, ?1, 'failed', 6, ?2, ?2, created_at from events where business_id = ?3`,
      )
      .bind(endpoint.id, failedAt, business.id)
      .run();

    const { batches, queue } = recordingQueue();
    await call("/api/v1/me", { key: apiKey });
    const { response, trips } = await roundTrips(recoverPath(endpoint.id), {
      key: apiKey,
      method: "POST",
      body: { since: iso(Date.now() - 24 * HOUR) },
      bindings: { WEBHOOK_DELIVERIES: queue },
    });
    await expect(response).toHaveStatus(202);
    expect(await json(response)).toEqual({ queued: COUNT });
    expect(trips).toHaveLength(2);

    const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id));
    expect(rows).toHaveLength(COUNT);
    expect(
      rows.every(
        (row) =>
          row.status === "failed" && row.attemptCount === 6 && row.extraAttemptAt !== null && row.enqueuedAt === null,
      ),
    ).toBe(true);
    expect(batches).toHaveLength(COUNT / 100);
    expect(batches.every((batch) => batch.length === 100)).toBe(true);
    // Oldest first, the order in which they were missed.
    expect(batches.flat()).toEqual(rows.map((row) => row.id).sort((a, b) => a - b));

    // Owed already: a second recover asks for nothing twice.
    expect(await json(await recover(apiKey, endpoint.id, iso(Date.now() - 24 * HOUR)))).toEqual({ queued: 0 });
    expect(await db.$count(events, eq(events.businessId, business.id))).toBe(COUNT);
  });

  it("asks for each delivery once when recovers race", async () => {
    const { business, apiKey } = await createBusiness();
    const endpoint = await subscribe(apiKey, "https://partner.example/race", ["lead.created"]);
    const failed = (await deliveriesTo(business, endpoint.id, 40)).deliveryIds;
    await failedFixture(failed, Date.now() - 20 * HOUR);
    // Ten pending, each after one failed attempt, its next one a minute away.
    const pending = (await deliveriesTo(business, endpoint.id, 10)).deliveryIds;
    await db
      .update(webhookDeliveries)
      .set({ attemptCount: 1, nextAttemptAt: iso(Date.now() + 60_000) })
      .where(inArray(webhookDeliveries.id, pending));
    const { batches, queue } = recordingQueue();
    const answers = await Promise.all(
      Array.from({ length: 3 }, () =>
        call(recoverPath(endpoint.id), {
          key: apiKey,
          method: "POST",
          body: { since: iso(Date.now() - 24 * HOUR) },
          bindings: { WEBHOOK_DELIVERIES: queue },
        }),
      ),
    );
    const queued = await Promise.all(answers.map(async (answer) => (await json<{ queued: number }>(answer)).queued));
    expect(queued.reduce((sum, n) => sum + n, 0)).toBe(50);
    expect(batches.flat().sort((a, b) => a - b)).toEqual([...failed, ...pending].sort((a, b) => a - b));
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, endpoint.id))).toBe(50);
  });

  it("walks only the endpoint's own range of deliveries, never every business's pending ones", async () => {
    const { apiKey } = await createBusiness();
    const endpoint = await subscribe(apiKey, "https://partner.example/plan", ["lead.created"]);
    const principal = await apiKeyPrincipal(apiKey);
    const plans = await Promise.all(
      recoverWrites(principal, endpoint.id, iso(Date.now() - HOUR), Date.now()).map(async (write) => {
        const { sql, params } = write.prepared(db).query;
        return (await queryPlan(shardD1, sql, fillPlaceholders(params, write.values))).join("; ");
      }),
    );
    // One range of (endpoint_id, status[, completed_at]) each: never the index of every business's due deliveries.
    for (const plan of plans) {
      expect(plan).toMatch(
        /^SEARCH webhook_deliveries USING INDEX webhook_deliveries_endpoint_status \(endpoint_id=\? AND status=\?/,
      );
    }
  });

  describe("its rules", async () => {
    const { business, apiKey } = await createBusiness();
    const endpoint = await subscribe(apiKey, "https://partner.example/rules", ["lead.created"]);
    const revoked = await createApiKey(business.id, { revoked: true });

    it.each([
      ["no since", {}, /^The field "since" /],
      [
        "a date without a time",
        { since: "2026-11-20" },
        'The field "since" must be an ISO 8601 date and time with its time zone, such as 2026-11-22T10:30:00+01:00.',
      ],
      [
        "a time without its zone",
        { since: "2026-11-20T10:00:00" },
        /^The field "since" must be an ISO 8601 date and time/,
      ],
      [
        "a date that does not exist",
        { since: "2026-02-30T10:00:00Z" },
        'The field "since" must be a real date and time.',
      ],
      ["a number", { since: 1_700_000_000 }, /^The field "since" /],
      [
        "a time in the future",
        { since: iso(Date.now() + 60_000) },
        'The field "since" is in the future: it must be a time within the last 30 days.',
      ],
      [
        "more than 30 days ago",
        { since: iso(Date.now() - KEPT_FOR_MS - 60_000) },
        'The field "since" is more than 30 days ago: deliveries are kept 30 days.',
      ],
    ])("refuses %s with a 400", async (_case, body, sentence) => {
      await expectError(await call(recoverPath(endpoint.id), { key: apiKey, method: "POST", body }), 400, sentence);
    });

    it("accepts since at both edges: 30 days ago and now", async () => {
      expect(await json(await recover(apiKey, endpoint.id, iso(Date.now() - KEPT_FOR_MS + 60_000)))).toEqual({
        queued: 0,
      });
      expect(await json(await recover(apiKey, endpoint.id, iso(Date.now())))).toEqual({ queued: 0 });
    });

    it(`takes ${RECOVERS_PER_HOUR} an hour per endpoint, then 429`, async () => {
      const fresh = await subscribe(apiKey, "https://partner.example/recovers", ["lead.created"]);
      await awayFromWindowEdge(10_000, HOUR);
      const answers = await Promise.all(
        Array.from({ length: RECOVERS_PER_HOUR + 3 }, () => recover(apiKey, fresh.id, iso(Date.now() - HOUR))),
      );
      expect(answers.filter((answer) => answer.status === 202)).toHaveLength(RECOVERS_PER_HOUR);
      const refused = answers.filter((answer) => answer.status === 429);
      expect(refused).toHaveLength(3);
      expect(refused[0]?.headers.get("Retry-After")).toMatch(/^\d+$/);
      await expectError(
        refused[0] as Response,
        429,
        `A webhook endpoint can be recovered at most ${RECOVERS_PER_HOUR} times an hour; try again when the hour is up.`,
      );
    });

    it("answers 401 before any 400 or 404", async () => {
      await expectMissingCredential(await call(recoverPath(endpoint.id), { method: "POST", body: { since: "x" } }));
      await expectMissingCredential(await call(redeliverPath(endpoint.id, 1), { method: "POST" }));
      await expectMissingCredential(await call(deliveriesPath(endpoint.id)));
      for (const response of [
        await call(recoverPath("abc"), { key: revoked.apiKey, method: "POST", body: { since: "x" } }),
        await call(redeliverPath(endpoint.id, "abc"), { key: revoked.apiKey, method: "POST" }),
        await call(deliveriesPath(endpoint.id, "?limit=0"), { key: revoked.apiKey }),
      ]) {
        await expectError(response, 401, /revoked/);
      }
    });
  });
});
