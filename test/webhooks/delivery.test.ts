import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import Stripe from "stripe";
import { describe, expect, it, vi } from "vitest";
import { app } from "../../src/app";
import { runRead } from "../../src/db/reads";
import { oauthClients, webhookDeliveries } from "../../src/db/schema";
import { UNAPPROVED_CLIENT_LIFETIME_MS } from "../../src/domain/oauth/client-cleanup";
import { RETRY_DELAYS_SECONDS } from "../../src/domain/webhooks/attempts";
import { endpointDeliveries } from "../../src/domain/webhooks/delivery-log";
import {
  deliveriesToSweep,
  STUCK_AFTER_MS,
  sweepOutbox,
  UNENQUEUED_AFTER_MS,
} from "../../src/domain/webhooks/outbox/sweep";
import { sendPing } from "../../src/domain/webhooks/test-events";
import { ANSWER_TIMEOUT_MS } from "../../src/queues/deliver-webhooks";
import { runScheduled } from "../helpers/cron";
import { deps } from "../helpers/dependencies";
import { createApiKey, createBusiness, db, globalDb } from "../helpers/fixtures";
import { RUNTIME } from "../helpers/http";
import { registerClient } from "../helpers/oauth";
import { bookingObject } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { verifyWebhookSignature } from "../helpers/verify-signature";
import { attemptsOf, consume, deliveryRow, outboxOnly, subscribe } from "../helpers/webhooks";

// The consumer's clock in the tests that drive it: in the future, so that the sweep (on the real clock) never takes
// their deliveries for lost ones.
const T0 = Date.parse("2030-01-07T10:00:00.000Z");

const booking = (id: number) => bookingObject(id, { conversation_id: "conv_1" });

async function report(businessId: string, body: unknown, environment = env) {
  const ctx = createExecutionContext();
  const request = new Request(`http://localhost:8787/internal/v1/businesses/${businessId}/events`, {
    method: "POST",
    headers: { ...RUNTIME, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  const response = await app.fetch(request, environment, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

describe("webhook delivery through the real queue", async () => {
  const { business, apiKey } = await createBusiness({ name: "Café Zoë" });
  const box = receiverBox("e2e");
  const endpoint = await subscribe(apiKey, box.url("/hooks"));

  it("POSTs the envelope with the headers of docs/guides/webhooks.md, The request, signed so that stripe and WebCrypto both verify it", async () => {
    const response = await report(business.id, { booking: booking(7001) });
    await expect(response).toHaveStatus(201);
    const [{ id: eventId }] = ((await response.json()) as { events: Array<{ id: string }> }).events as [{ id: string }];

    const [request] = await box.arrived(1);
    expect(request?.method).toBe("POST");
    expect(request?.path).toBe(`/${box.url("/hooks").split("/").slice(3).join("/")}`);
    const delivery = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId)).get();
    expect(request?.headers).toMatchObject({
      "content-type": "application/json",
      "user-agent": "Secretary-Webhooks/1.0 (+http://localhost:8787)",
      "x-service-event": "booking.created",
      "x-service-delivery": String(delivery?.id),
    });
    const signature = request?.headers["x-service-signature"] ?? "";
    expect(signature).toMatch(/^t=\d{10},v1=[0-9a-f]{64}$/);

    const body = request?.body ?? "";
    expect(JSON.parse(body)).toEqual({
      id: eventId,
      event: "booking.created",
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      business: { id: business.id, handle: business.handle, name: "Café Zoë" },
      // The booking as stored, with the service's updated_at (docs/decisions.md, Paging and sync).
      data: { booking: { ...booking(7001), updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T[\d:.]{12}Z$/) } },
    });

    const stripe = new Stripe("sk_test_unused");
    const verified = await stripe.webhooks.constructEventAsync(
      body,
      signature,
      endpoint.secret,
      300,
      Stripe.createSubtleCryptoProvider(),
    );
    expect(verified.id).toBe(eventId);
    expect(await verifyWebhookSignature(body, signature, endpoint.secret)).toBe(true);
    expect(await verifyWebhookSignature(`${body} `, signature, endpoint.secret)).toBe(false);
    expect(await verifyWebhookSignature(body, signature, "whsec_wrong")).toBe(false);
    await expect(
      stripe.webhooks.constructEventAsync(body, signature, "whsec_wrong", 300, Stripe.createSubtleCryptoProvider()),
    ).rejects.toThrow();

    await vi.waitFor(async () => expect((await deliveryRow(delivery?.id ?? 0))?.status).toBe("delivered"));
    const attempts = await attemptsOf(delivery?.id ?? 0);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ statusCode: 200, error: null });
  });

  it("delivers an event emitted while the queue refused the send, once the sweep runs", {
    timeout: 15_000,
  }, async () => {
    const brokenQueue = {
      send: () => Promise.reject(new Error("queue unavailable")),
      sendBatch: () => Promise.reject(new Error("queue unavailable")),
    };
    // The Worker says so in a warn line (src/domain/webhooks/outbox/enqueue.ts), read here instead of printed.
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});
    const response = await report(
      business.id,
      { booking: booking(7002) },
      { ...env, WEBHOOK_DELIVERIES: brokenQueue as never },
    );
    await expect(response).toHaveStatus(201);
    await vi.waitFor(() => expect(warn).toHaveBeenCalled());
    const line = String(warn.mock.calls[0]?.[0]);
    warn.mockRestore();
    expect(JSON.parse(line)).toEqual({
      level: "warn",
      message: "enqueue failed; the outbox sweep will retry",
      deliveries: 1,
      error: "Error: queue unavailable",
    });
    const [{ id: eventId }] = ((await response.json()) as { events: Array<{ id: string }> }).events as [{ id: string }];
    const delivery = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, eventId)).get();
    expect(delivery).toMatchObject({ status: "pending", enqueuedAt: null, attemptCount: 0 });

    // Not yet: a send may still be under way for a minute.
    expect(await sweepOutbox(deps)).toBe(0);
    const written = new Date(Date.now() - UNENQUEUED_AFTER_MS - 1000).toISOString();
    await db
      .update(webhookDeliveries)
      .set({ createdAt: written })
      .where(eq(webhookDeliveries.id, delivery?.id ?? 0));
    expect(await sweepOutbox(deps)).toBe(1);

    await vi.waitFor(async () => expect((await deliveryRow(delivery?.id ?? 0))?.status).toBe("delivered"), {
      timeout: 10_000,
      interval: 100,
    });
    const bodies = (await box.recorded()).map((r) => JSON.parse(r.body).id);
    expect(bodies.filter((id) => id === eventId)).toHaveLength(1);
  });
});

describe("the consumer: attempts, the retry schedule and idempotence", async () => {
  const { business, apiKey } = await createBusiness();

  async function deliveryTo(url: string, events?: string[]) {
    await subscribe(apiKey, url, events);
    const { deliveryIds } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 1 } } }]);
    const id = deliveryIds.at(-1);
    if (id === undefined) throw new Error("no delivery written");
    return id;
  }

  it.each([
    ["a 500", "/status/500", { statusCode: 500, error: "answered HTTP 500" }],
    ["a 302", "/redirect", { statusCode: 302, error: "answered with a redirect, which is not followed" }],
    ["a 404", "/status/404", { statusCode: 404, error: "answered HTTP 404" }],
  ])("retries after %s with the first delay of the schedule, and records the attempt", async (_case, path, attempt) => {
    const box = receiverBox("fail");
    const id = await deliveryTo(box.url(path));
    expect(await consume(id, T0)).toEqual({ acked: false, retryDelay: 60 });
    expect(await attemptsOf(id)).toEqual([
      expect.objectContaining({ ...attempt, attemptedAt: new Date(T0).toISOString(), durationMs: 0 }),
    ]);
    expect(await deliveryRow(id)).toMatchObject({
      status: "pending",
      attemptCount: 1,
      nextAttemptAt: new Date(T0 + 60_000).toISOString(),
      leaseUntil: null,
    });
    expect(await box.recorded()).toHaveLength(1);
  });

  it("retries after a refused connection", async () => {
    const id = await deliveryTo("http://127.0.0.1:9/closed");
    expect(await consume(id, T0)).toEqual({ acked: false, retryDelay: 60 });
    const [attempt] = await attemptsOf(id);
    expect(attempt?.statusCode).toBeNull();
    expect(attempt?.error).toMatch(/^the connection failed/);
  });

  it("retries when the receiver does not answer within the answer time (10 s; shortened here)", async () => {
    expect(ANSWER_TIMEOUT_MS).toBe(10_000);
    const id = await deliveryTo(receiverBox("slow").url("/delay/1500"));
    expect(await consume(id, T0, { answerTimeoutMs: 300 })).toEqual({ acked: false, retryDelay: 60 });
    expect((await attemptsOf(id))[0]).toMatchObject({ statusCode: null, error: "no answer within 0.3 seconds" });
  });

  it("refuses a host that resolves to a private address, and retries", async () => {
    const id = await deliveryTo("https://hooks.private.test/secretary");
    expect(await consume(id, T0)).toEqual({ acked: false, retryDelay: 60 });
    expect((await attemptsOf(id))[0]?.error).toBe("address cannot be fetched: the host resolves to a private address");
  });

  it("fails after six attempts, one per step of 1, 5, 30, 120 and 720 minutes, each freshly signed", async () => {
    const box = receiverBox("six");
    const id = await deliveryTo(box.url("/status/503"));
    let now = T0;
    for (const delay of RETRY_DELAYS_SECONDS) {
      expect(await consume(id, now)).toEqual({ acked: false, retryDelay: delay });
      // Early: a duplicate message arriving before the delay is over sends nothing.
      expect(await consume(id, now + 1000)).toEqual({ acked: true, retryDelay: undefined });
      now += delay * 1000;
    }
    expect(await consume(id, now)).toEqual({ acked: true, retryDelay: undefined });
    expect(await deliveryRow(id)).toMatchObject({
      status: "failed",
      attemptCount: 6,
      completedAt: new Date(now).toISOString(),
    });
    const attempts = await attemptsOf(id);
    expect(attempts).toHaveLength(6);
    const sent = await box.recorded();
    expect(sent).toHaveLength(6);
    const timestamps = sent.map((r) => r.headers["x-service-signature"]?.match(/^t=(\d+),/)?.[1]);
    expect(new Set(timestamps).size).toBe(6);
    expect(timestamps[0]).toBe(String(T0 / 1000));
    // A failed delivery is never sent again.
    expect(await consume(id, now + 86_400_000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(6);
  });

  it("stops retrying after a success that follows a failure", async () => {
    const box = receiverBox("recover");
    const id = await deliveryTo(box.url("/fail-first/1"));
    expect(await consume(id, T0)).toEqual({ acked: false, retryDelay: 60 });
    expect(await consume(id, T0 + 60_000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 2 });
    expect((await attemptsOf(id)).map((a) => a.statusCode)).toEqual([500, 200]);
    expect(await consume(id, T0 + 120_000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(2);
  });

  it("sends nothing twice for duplicate messages, even when they arrive together", async () => {
    const box = receiverBox("dup");
    const id = await deliveryTo(box.url("/ok"));
    const results = await Promise.all([consume(id, T0), consume(id, T0), consume(id, T0)]);
    expect(results.every((r) => r.acked && r.retryDelay === undefined)).toBe(true);
    expect(await box.recorded()).toHaveLength(1);
    expect(await consume(id, T0 + 5000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(1);
    expect(await attemptsOf(id)).toHaveLength(1);
  });

  it("marks a delivery enqueued at its first claim, which the sweep then leaves to its schedule", async () => {
    const box = receiverBox("claimed");
    const id = await deliveryTo(box.url("/status/500"));
    expect((await deliveryRow(id))?.enqueuedAt).toBeNull();
    expect((await consume(id, T0)).retryDelay).toBe(RETRY_DELAYS_SECONDS[0]);
    expect((await deliveryRow(id))?.enqueuedAt).toBe(new Date(T0).toISOString());
    // Written long ago and pending again, but claimed: not a delivery whose message never reached the queue.
    const written = new Date(Date.now() - UNENQUEUED_AFTER_MS - 1000).toISOString();
    await db.update(webhookDeliveries).set({ createdAt: written }).where(eq(webhookDeliveries.id, id));
    expect((await deliveriesToSweep(deps, Date.now(), 500)).lost).not.toContain(id);
    // A second message for it (the sweep's, for a backlog) sends nothing before the schedule's time.
    expect(await consume(id, T0 + 1000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(1);
  });

  it("sends nothing for a pending delivery once its endpoint is deleted", async () => {
    const box = receiverBox("deleted");
    const id = await deliveryTo(box.url("/ok"));
    const endpointId = (await deliveryRow(id))?.endpointId;
    const deleted = await app.request(
      `/api/v1/webhooks/${endpointId}`,
      { method: "DELETE", headers: { Authorization: `Bearer ${apiKey}` } },
      env,
    );
    await expect(deleted).toHaveStatus(204);
    expect(await consume(id, T0)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(0);
    expect(await deliveryRow(id)).toBeUndefined();
  });

  it("re-enqueues a delivery whose message was lost, once it is long past due", async () => {
    const box = receiverBox("lost");
    const id = await deliveryTo(box.url("/ok"));
    const due = Date.now() - STUCK_AFTER_MS - 60_000;
    await db
      .update(webhookDeliveries)
      .set({ enqueuedAt: new Date(due).toISOString(), nextAttemptAt: new Date(due).toISOString() })
      .where(eq(webhookDeliveries.id, id));
    expect(await sweepOutbox(deps)).toBeGreaterThanOrEqual(1);
    await vi.waitFor(async () => expect((await deliveryRow(id))?.status).toBe("delivered"), { timeout: 10_000 });
    expect(await box.recorded()).toHaveLength(1);
  });

  it("runs the sweep and the client cleanup from the Worker's cron trigger (the scheduled handler)", async () => {
    const box = receiverBox("cron");
    const id = await deliveryTo(box.url("/ok"));
    const written = new Date(Date.now() - UNENQUEUED_AFTER_MS - 1000).toISOString();
    await db.update(webhookDeliveries).set({ createdAt: written }).where(eq(webhookDeliveries.id, id));
    const abandoned = await registerClient();
    const longAgo = new Date(Date.now() - UNAPPROVED_CLIENT_LIFETIME_MS - 60_000).toISOString();
    await globalDb.update(oauthClients).set({ createdAt: longAgo }).where(eq(oauthClients.id, abandoned.client_id));
    await runScheduled();
    expect(await globalDb.$count(oauthClients, eq(oauthClients.id, abandoned.client_id))).toBe(0);
    expect((await deliveryRow(id))?.enqueuedAt).not.toBeNull();
    await vi.waitFor(async () => expect((await deliveryRow(id))?.status).toBe("delivered"), { timeout: 10_000 });
    expect(await box.recorded()).toHaveLength(1);
  });
});

describe("who receives what", async () => {
  const { business, apiKey } = await createBusiness();
  const second = await createApiKey(business.id);
  const boxes = {
    everything: receiverBox("all"),
    intakesOfMine: receiverBox("mine"),
    everythingAndIntakes: receiverBox("all-and-mine"),
    intakesOfTheOtherKey: receiverBox("other-key"),
    ordersOnly: receiverBox("orders"),
  };
  const endpoints = {
    everything: await subscribe(apiKey, boxes.everything.url(), ["*"]),
    intakesOfMine: await subscribe(apiKey, boxes.intakesOfMine.url(), ["intake.completed"]),
    everythingAndIntakes: await subscribe(apiKey, boxes.everythingAndIntakes.url(), ["*", "intake.completed"]),
    intakesOfTheOtherKey: await subscribe(second.apiKey, boxes.intakesOfTheOtherKey.url(), ["intake.completed"]),
    ordersOnly: await subscribe(apiKey, boxes.ordersOnly.url(), ["order.created"]),
  };
  const receiversOf = async (deliveryIds: number[]) => {
    const rows = await Promise.all(deliveryIds.map(deliveryRow));
    return Object.entries(endpoints)
      .filter(([, endpoint]) => rows.some((row) => row?.endpointId === endpoint.id))
      .map(([name]) => name)
      .sort();
  };
  const firstKey = {
    apiKeyId: (await db.query.apiKeys.findFirst({ where: (k, { eq }) => eq(k.businessId, business.id) }))?.id ?? null,
    oauthGrantId: null,
  };

  it("sends intake.completed only to endpoints of the intake's owner that named it, never to a * subscriber", async () => {
    const { deliveryIds } = await outboxOnly(business, [
      { event: "intake.completed", data: { response_id: 1 }, audience: { principal: firstKey } },
    ]);
    expect(await receiversOf(deliveryIds)).toEqual(["everythingAndIntakes", "intakesOfMine"]);
  });

  it("sends other events to * subscribers and to endpoints that named them", async () => {
    expect(await receiversOf((await outboxOnly(business, [{ event: "order.created", data: {} }])).deliveryIds)).toEqual(
      ["everything", "everythingAndIntakes", "ordersOnly"],
    );
    expect(await receiversOf((await outboxOnly(business, [{ event: "lead.created", data: {} }])).deliveryIds)).toEqual([
      "everything",
      "everythingAndIntakes",
    ]);
  });

  it("sends a ping to the one endpoint whose Test button was pressed, and shows it in its history", async () => {
    const { event, deliveryId } = await sendPing(deps, business, endpoints.ordersOnly.id);
    expect(event?.event).toBe("ping");
    expect(await receiversOf([deliveryId ?? 0])).toEqual(["ordersOnly"]);
    await vi.waitFor(
      async () => {
        const [request] = await boxes.ordersOnly.recorded();
        expect(request?.headers["x-service-event"]).toBe("ping");
        expect(JSON.parse(request?.body ?? "{}").data).toEqual({
          message: `Test event from ${business.name}'s dashboard.`,
        });
      },
      { timeout: 10_000 },
    );
    await vi.waitFor(async () => {
      const history = await runRead(
        db,
        endpointDeliveries(business.id, endpoints.ordersOnly.id, { limit: 50 }, Date.now()),
      );
      expect(history.deliveries[0]).toMatchObject({
        id: deliveryId,
        event: "ping",
        status: "delivered",
        attempts: [expect.objectContaining({ status_code: 200, error: null })],
      });
    });
  });

  it("keeps one business's endpoints out of another's history and pings", async () => {
    const other = await createBusiness();
    await expect(
      runRead(db, endpointDeliveries(other.business.id, endpoints.everything.id, { limit: 50 }, Date.now())),
    ).rejects.toThrow(/No webhook endpoint/);
    await expect(sendPing(deps, other.business, endpoints.everything.id)).rejects.toThrow(/No webhook endpoint/);
  });
});
