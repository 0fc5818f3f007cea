import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import { SENDS_PER_HOUR } from "../../src/domain/webhooks/endpoint-budgets";
import {
  DISABLED,
  deliveriesPath,
  deliveriesTo,
  failAllAttempts,
  HOUR,
  happenedAt,
  iso,
  listDeliveries,
  recover,
  redeliver,
  redeliverPath,
} from "../helpers/deliveries-api";
import { createBusiness, db } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";
import { receiverBox } from "../helpers/receiver";
import { roundTrips } from "../helpers/round-trips";
import { verifyStandardWebhook, verifyWebhookSignature } from "../helpers/verify-signature";
import { attemptsOf, consume, deliveryRow, subscribe } from "../helpers/webhooks";
import type { RecordedRequest } from "../recorded-request";

// docs/webhooks.md, Deliveries, redelivery and recovery: deliveries of one endpoint, for its owner side only: the list
// with every attempt, a redelivery now, and recover of everything that failed since a time; both through the outbox and
// the real queue.

describe("POST /webhooks/{id}/deliveries/{delivery_id}/redeliver", async () => {
  const { business, apiKey } = await createBusiness();

  /** One delivery to the endpoint, as if written `ago` milliseconds ago. */
  async function oneDelivery(endpointId: number, ago = 0) {
    const {
      eventIds: [eventId = ""],
      deliveryIds: [id = 0],
    } = await deliveriesTo(business, endpointId, 1);
    if (ago > 0) await happenedAt([id], Date.now() - ago);
    return { id, eventId };
  }

  /** Once the extra attempt is recorded: the debt is cleared in the same batch as the attempt. */
  const attempted = (id: number) =>
    vi.waitFor(
      async () => {
        const row = await deliveryRow(id);
        expect(row?.extraAttemptAt).toBeNull();
        return row;
      },
      { timeout: 10_000, interval: 100 },
    );

  /**
   * The redelivery as the receiver got it: the same delivery (X-Service-Delivery) and envelope (webhook-id) as its
   * first attempt, signed now, so that it verifies both ways within the 300 seconds a receiver allows.
   */
  async function expectSameDeliverySignedNow(
    again: RecordedRequest | undefined,
    first: RecordedRequest | undefined,
    secret: string,
  ) {
    expect(again?.headers["x-service-delivery"]).toMatch(/^\d+$/);
    expect(again?.headers["x-service-delivery"]).toBe(first?.headers["x-service-delivery"]);
    expect(again?.headers["webhook-id"]).toBe(first?.headers["webhook-id"]);
    expect(again?.body).toBe(first?.body);
    const body = again?.body ?? "";
    expect(await verifyWebhookSignature(body, again?.headers["x-service-signature"] ?? "", secret)).toBe(true);
    expect(await verifyStandardWebhook(body, new Headers(again?.headers), secret)).toBe(true);
  }

  const endpointAt = (box: ReturnType<typeof receiverBox>, path: string) =>
    subscribe(apiKey, box.url(path), ["lead.created"]);

  it("attempts a failed delivery once more, as the same delivery signed now, which a success delivers", async () => {
    const box = receiverBox("failed-then-ok");
    const endpoint = await endpointAt(box, "/fail-first/6");
    const { id, eventId } = await oneDelivery(endpoint.id, 20 * HOUR);
    await failAllAttempts([id], Date.now() - 20 * HOUR);

    const response = await redeliver(apiKey, endpoint.id, id);
    await expect(response).toHaveStatus(202);
    expect(await json(response)).toEqual({ delivery_id: id, event_id: eventId });

    const requests = await box.arrived(7);
    await expectSameDeliverySignedNow(requests[6], requests[0], endpoint.secret);
    // The sixth attempt was signed at its own time, 5 hours ago: a receiver would refuse it now.
    const sixth = requests[5];
    expect(
      await verifyWebhookSignature(sixth?.body ?? "", sixth?.headers["x-service-signature"] ?? "", endpoint.secret),
    ).toBe(false);
    const row = await attempted(id);
    expect(row).toMatchObject({ status: "delivered", attemptCount: 6 });
    // The same delivery, its history one attempt longer: no new delivery.
    const listed = await listDeliveries(apiKey, endpoint.id);
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).toMatchObject({ id, event_id: eventId, status: "delivered", next_attempt_at: null });
    expect(listed.data[0]?.attempts.map((attempt) => attempt.status_code)).toEqual([500, 500, 500, 500, 500, 500, 200]);
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, endpoint.id))).toBe(1);
  });

  it("leaves a failed delivery failed when the extra attempt fails too, and starts no schedule", async () => {
    const box = receiverBox("failed-still");
    const endpoint = await endpointAt(box, "/status/500");
    const { id } = await oneDelivery(endpoint.id, 20 * HOUR);
    await failAllAttempts([id], Date.now() - 20 * HOUR);
    const before = await deliveryRow(id);

    await expect(await redeliver(apiKey, endpoint.id, id)).toHaveStatus(202);
    const requests = await box.arrived(7);
    await expectSameDeliverySignedNow(requests[6], requests[0], endpoint.secret);
    // Failed as it was: the same count, completion and due time; only its enqueue was marked.
    expect(await attempted(id)).toEqual({ ...before, enqueuedAt: expect.any(String) });
    const [listed] = (await listDeliveries(apiKey, endpoint.id)).data;
    expect(listed).toMatchObject({ id, status: "failed", next_attempt_at: null });
    expect(listed?.attempts.map((attempt) => attempt.status_code)).toEqual(Array.from({ length: 7 }, () => 500));
    // Nothing comes after it: a message now sends nothing.
    expect(await consume(id, Date.now() + HOUR)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(7);
  });

  it("gives a pending delivery one attempt more and keeps its schedule: its next attempts come as they would have", async () => {
    const box = receiverBox("pending");
    const endpoint = await endpointAt(box, "/fail-first/3");
    const { id } = await oneDelivery(endpoint.id);
    const T0 = Date.now();
    expect(await consume(id, T0)).toEqual({ acked: false, retryDelay: 60 });
    const before = await deliveryRow(id);
    expect(before).toMatchObject({ status: "pending", attemptCount: 1, nextAttemptAt: iso(T0 + 60_000) });

    const response = await redeliver(apiKey, endpoint.id, id);
    await expect(response).toHaveStatus(202);
    expect((await json<{ delivery_id: number }>(response)).delivery_id).toBe(id);
    const requests = await box.arrived(2);
    await expectSameDeliverySignedNow(requests[1], requests[0], endpoint.secret);
    expect(await attempted(id)).toEqual({ ...before, enqueuedAt: expect.any(String) });
    const [listed] = (await listDeliveries(apiKey, endpoint.id)).data;
    expect(listed).toMatchObject({ id, status: "pending", next_attempt_at: iso(T0 + 60_000) });
    expect(listed?.attempts.map((attempt) => attempt.status_code)).toEqual([500, 500]);

    // Its schedule goes on as if nothing had happened: the second attempt a minute after the first, which fails and
    // is followed 5 minutes later by the third (the extra attempt is not counted).
    expect(await consume(id, T0 + 60_000)).toEqual({ acked: false, retryDelay: 300 });
    expect(await consume(id, T0 + 360_000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 3 });
    expect((await attemptsOf(id)).map((attempt) => attempt.statusCode)).toEqual([500, 500, 500, 200]);
    expect(await box.recorded()).toHaveLength(4);
  });

  it("delivers a pending delivery whose extra attempt succeeds, which ends its schedule", async () => {
    const box = receiverBox("pending-then-ok");
    const endpoint = await endpointAt(box, "/fail-first/1");
    const { id } = await oneDelivery(endpoint.id);
    const T0 = Date.now();
    expect(await consume(id, T0)).toEqual({ acked: false, retryDelay: 60 });

    await expect(await redeliver(apiKey, endpoint.id, id)).toHaveStatus(202);
    const requests = await box.arrived(2);
    await expectSameDeliverySignedNow(requests[1], requests[0], endpoint.secret);
    expect(await attempted(id)).toMatchObject({
      status: "delivered",
      attemptCount: 1,
      completedAt: expect.any(String),
    });
    // Its scheduled message, when it comes, sends nothing.
    expect(await consume(id, T0 + 60_000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(2);
    const [listed] = (await listDeliveries(apiKey, endpoint.id)).data;
    expect(listed).toMatchObject({ id, status: "delivered", next_attempt_at: null });
    expect(listed?.attempts.map((attempt) => attempt.status_code)).toEqual([500, 200]);
  });

  it("sends a delivered delivery once more too, which stays delivered whatever the answer", async () => {
    const box = receiverBox("delivered-again");
    const endpoint = await endpointAt(box, "/ok");
    const { id } = await oneDelivery(endpoint.id);
    expect(await consume(id, Date.now())).toEqual({ acked: true, retryDelay: undefined });
    const before = await deliveryRow(id);
    await expect(await redeliver(apiKey, endpoint.id, id)).toHaveStatus(202);
    const requests = await box.arrived(2);
    await expectSameDeliverySignedNow(requests[1], requests[0], endpoint.secret);
    expect(await attempted(id)).toEqual({ ...before, enqueuedAt: expect.any(String) });
    expect(await attemptsOf(id)).toHaveLength(2);
  });

  it("answers 409 for a disabled endpoint, and sends nothing", async () => {
    const disabled = await subscribe(apiKey, receiverBox("disabled").url("/ok"), ["review.created"]);
    const [delivery = 0] = (await deliveriesTo(business, disabled.id, 1)).deliveryIds;
    await db.update(webhookEndpoints).set({ status: "disabled" }).where(eq(webhookEndpoints.id, disabled.id));
    await expectError(await redeliver(apiKey, disabled.id, delivery), 409, DISABLED);
    await expectError(await recover(apiKey, disabled.id, iso(Date.now() - HOUR)), 409, DISABLED);
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, disabled.id))).toBe(1);
    // Its history stays readable.
    expect((await listDeliveries(apiKey, disabled.id)).data.map((d) => d.id)).toEqual([delivery]);
  });

  it(`takes ${SENDS_PER_HOUR} an hour per endpoint, even sent at once, then 429 with Retry-After`, async () => {
    const sender = receiverBox("budget");
    const busy = await subscribe(apiKey, sender.url("/ok"), ["order.created"]);
    const quiet = await subscribe(apiKey, sender.url("/ok"), ["order.created"]);
    const [delivery = 0] = (await deliveriesTo(business, busy.id, 1)).deliveryIds;
    const [quietDelivery = 0] = (await deliveriesTo(business, quiet.id, 1)).deliveryIds;
    await awayFromWindowEdge(10_000, HOUR);
    const answers = await Promise.all(
      Array.from({ length: SENDS_PER_HOUR + 10 }, () => redeliver(apiKey, busy.id, delivery)),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(SENDS_PER_HOUR);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);
    // Every one an attempt of the same delivery: no delivery is added.
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, busy.id))).toBe(1);

    const refused = answers.find((answer) => answer.status === 429) as Response;
    const secondsLeftInHour = Math.ceil((HOUR - (Date.now() % HOUR)) / 1000);
    const retryAfter = Number(refused.headers.get("Retry-After"));
    expect(Math.abs(retryAfter - secondsLeftInHour)).toBeLessThanOrEqual(2);
    const POLICIES = `"requests";q=600;w=60, "webhook_sends";q=${SENDS_PER_HOUR};w=3600`;
    expect(refused.headers.get("RateLimit-Policy")).toBe(POLICIES);
    expect(refused.headers.get("RateLimit")).toBe(`"webhook_sends";r=0;t=${retryAfter}`);
    await expectError(
      refused,
      429,
      `A webhook endpoint can be sent at most ${SENDS_PER_HOUR} redeliveries and test events an hour; try again when the hour is up.`,
      { code: "rate_limited", param: undefined },
    );
    const accepted = answers.find((answer) => answer.status === 202) as Response;
    expect(accepted.headers.get("RateLimit-Policy")).toBe(POLICIES);
    expect(accepted.headers.get("RateLimit")).toMatch(/^"webhook_sends";r=\d+;t=\d+$/);

    // Test events count in the same budget; another endpoint has its own.
    await expect(
      await call(`/api/v1/webhooks/${busy.id}/test`, { key: apiKey, method: "POST", body: {} }),
    ).toHaveStatus(429);
    const elsewhere = await redeliver(apiKey, quiet.id, quietDelivery);
    await expect(elsewhere).toHaveStatus(202);
    expect(elsewhere.headers.get("RateLimit")).toMatch(new RegExp(`^"webhook_sends";r=${SENDS_PER_HOUR - 1};t=\\d+$`));
  });

  it("makes two D1 round trips, with an API key and with an access token", async () => {
    const owner = await createOwnerBusiness();
    const app = await connectApp(owner);
    for (const [key, who] of [
      [apiKey, business],
      [app.tokens.access_token, owner.business],
    ] as const) {
      const target = await subscribe(key, receiverBox("trips").url("/ok"), ["lead.created"]);
      const [delivery = 0] = (await deliveriesTo(who, target.id, 1)).deliveryIds;
      await call("/api/v1/me", { key });
      const { response, trips } = await roundTrips(redeliverPath(target.id, delivery), { key, method: "POST" });
      await expect(response).toHaveStatus(202);
      expect(trips).toHaveLength(2);
      const listed = await roundTrips(deliveriesPath(target.id, "?limit=100"), { key });
      await expect(listed.response).toHaveStatus(200);
      expect(listed.trips).toHaveLength(1);
    }
  });
});
