import { env } from "cloudflare:test";
import { eq, fillPlaceholders, inArray } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { events, webhookDeliveries, webhookEndpoints } from "../src/db/schema";
import type { Business } from "../src/domain/access/businesses";
import { RETRY_DELAYS_SECONDS } from "../src/domain/webhooks/attempts";
import { RECOVERS_PER_HOUR, SENDS_PER_HOUR } from "../src/domain/webhooks/endpoint-budgets";
import { KEPT_FOR_MS } from "../src/domain/webhooks/event-log";
import { recoverWrites } from "../src/domain/webhooks/recovery";
import type { DeliveryMessage } from "../src/queues/delivery-message";
import { page, signedIn } from "./helpers/dashboard";
import { createApiKey, createBusiness, db } from "./helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "./helpers/http";
import { connectApp, createOwnerBusiness } from "./helpers/oauth";
import { apiKeyPrincipal } from "./helpers/principals";
import { awayFromWindowEdge } from "./helpers/rate-limit-window";
import { receiverBox } from "./helpers/receiver";
import { roundTrips } from "./helpers/round-trips";
import { verifyStandardWebhook, verifyWebhookSignature } from "./helpers/verify-signature";
import { attemptsOf, consume, consumeBatch, deliveryRow, outboxOnly, subscribe } from "./helpers/webhooks";
import type { RecordedRequest } from "./recorded-request";

// DESIGN.md, Beyond the spec: Deliveries of one endpoint, for its owner side only: the list with every attempt, a
// redelivery now, and recover of everything that failed since a time; both through the outbox and the real queue.

const HOUR = 3_600_000;

type Attempt = { attempted_at: string; status_code: number | null; error: string | null; duration_ms: number };
type Delivery = {
  id: number;
  event_id: string;
  event: string;
  status: "pending" | "delivered" | "failed";
  attempts: Attempt[];
  next_attempt_at: string | null;
  created_at: string;
};
type Page = { data: Delivery[]; has_more: boolean };

const ENDPOINT_NOT_FOUND = "No webhook endpoint with that id exists for this business.";
const DELIVERY_NOT_FOUND = "No delivery with that id exists for this webhook endpoint.";
const DISABLED = "The webhook endpoint is disabled: nothing is sent to it until it is enabled again.";

const deliveriesPath = (endpointId: number | string, query = "") => `/api/v1/webhooks/${endpointId}/deliveries${query}`;
const redeliverPath = (endpointId: number | string, deliveryId: number | string) =>
  `/api/v1/webhooks/${endpointId}/deliveries/${deliveryId}/redeliver`;
const recoverPath = (endpointId: number | string) => `/api/v1/webhooks/${endpointId}/recover`;

async function listDeliveries(key: string, endpointId: number, query = "") {
  const response = await call(deliveriesPath(endpointId, query), { key });
  expect(response.status, await response.clone().text()).toBe(200);
  return json<Page>(response);
}
const redeliver = (key: string, endpointId: number | string, deliveryId: number | string) =>
  call(redeliverPath(endpointId, deliveryId), { key, method: "POST" });
const recover = (key: string, endpointId: number | string, since: unknown) =>
  call(recoverPath(endpointId), { key, method: "POST", body: { since } });
const iso = (at: number) => new Date(at).toISOString();

/** Deliveries of `count` new events to that one endpoint, in the outbox and not enqueued: the test drives the consumer. */
async function deliveriesTo(business: Business, endpointId: number, count: number) {
  const drafts = Array.from({ length: count }, (_, n) => ({ event: "lead.created" as const, data: { n }, endpointId }));
  const { emitted, deliveryIds } = await outboxOnly(business, drafts);
  return { eventIds: emitted.map((event) => event.id), deliveryIds };
}

/** The deliveries (and their events) as if written at `at`, and due then. */
async function happenedAt(deliveryIds: number[], at: number) {
  await db
    .update(webhookDeliveries)
    .set({ createdAt: iso(at), nextAttemptAt: iso(at) })
    .where(inArray(webhookDeliveries.id, deliveryIds));
}

/** The real consumer through all six attempts of each delivery, from `start`, each failing: they end failed. */
async function failAllAttempts(deliveryIds: number[], start: number) {
  let at = start;
  for (const delay of [...RETRY_DELAYS_SECONDS, undefined]) {
    const outcomes = await consumeBatch(deliveryIds, at);
    expect(outcomes.map((outcome) => outcome.retryDelay)).toEqual(deliveryIds.map(() => delay));
    at += (delay ?? 0) * 1000;
  }
  for (const id of deliveryIds) expect((await deliveryRow(id))?.status).toBe("failed");
  return at;
}

/**
 * A queue binding that keeps what it is given: the enqueue of a large recover, without 3,000 real sends. Each send
 * takes a turn of the event loop, as the real one's I/O does.
 */
function recordingQueue() {
  const batches: number[][] = [];
  const queue = {
    send: async () => {},
    sendBatch: async (messages: Iterable<MessageSendRequest<DeliveryMessage>>) => {
      await new Promise((resolve) => setTimeout(resolve, 0));
      batches.push([...messages].map((message) => message.body.deliveryId));
    },
  };
  return { batches, queue: queue as unknown as Queue<DeliveryMessage> };
}

describe("GET /webhooks/{id}/deliveries", async () => {
  const { business, apiKey } = await createBusiness();
  const box = receiverBox("history");
  const ok = await subscribe(apiKey, box.url("/ok"), ["lead.created"]);
  const failing = await subscribe(apiKey, receiverBox("failing").url("/status/503"), ["review.created"]);
  const T0 = Date.now();

  it("lists the endpoint's deliveries newest first, each with its attempts and when the next one is due", async () => {
    const {
      eventIds: [deliveredEvent],
      deliveryIds: [delivered = 0],
    } = await deliveriesTo(business, ok.id, 1);
    expect(await consume(delivered, T0)).toEqual({ acked: true, retryDelay: undefined });
    const {
      eventIds: [failedEvent],
      deliveryIds: [failed = 0],
    } = await deliveriesTo(business, failing.id, 1);
    const finishedAt = await failAllAttempts([failed], T0);
    const {
      deliveryIds: [retrying = 0],
    } = await deliveriesTo(business, failing.id, 1);
    expect(await consume(retrying, T0)).toEqual({ acked: false, retryDelay: 60 });

    const okPage = await listDeliveries(apiKey, ok.id);
    expect(okPage).toEqual({
      data: [
        {
          id: delivered,
          event_id: deliveredEvent,
          event: "lead.created",
          status: "delivered",
          attempts: [{ attempted_at: iso(T0), status_code: 200, error: null, duration_ms: 0 }],
          next_attempt_at: null,
          created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
        },
      ],
      has_more: false,
    });
    const failingPage = await listDeliveries(apiKey, failing.id);
    expect(failingPage.data.map((delivery) => delivery.id)).toEqual([retrying, failed]);
    expect(failingPage.data[0]).toMatchObject({
      status: "pending",
      attempts: [{ attempted_at: iso(T0), status_code: 503, error: "answered HTTP 503", duration_ms: 0 }],
      next_attempt_at: iso(T0 + 60_000),
    });
    expect(failingPage.data[1]).toMatchObject({ event_id: failedEvent, status: "failed", next_attempt_at: null });
    expect(failingPage.data[1]?.attempts.map((attempt) => attempt.attempted_at)).toEqual(
      [0, 60, 360, 2160, 9360, 52_560].map((seconds) => iso(T0 + seconds * 1000)),
    );
    expect(failingPage.data[1]?.attempts.at(-1)?.attempted_at).toBe(iso(finishedAt));
  });

  it("filters by status", async () => {
    const failed = await listDeliveries(apiKey, failing.id, "?status=failed");
    expect(failed.data.map((delivery) => delivery.status)).toEqual(["failed"]);
    const pending = await listDeliveries(apiKey, failing.id, "?status=pending");
    expect(pending.data.map((delivery) => delivery.status)).toEqual(["pending"]);
    expect(await listDeliveries(apiKey, ok.id, "?status=failed")).toEqual({ data: [], has_more: false });
  });

  it("walks 205 deliveries in pages of 100 with starting_after, each exactly once", async () => {
    const endpoint = await subscribe(apiKey, "https://partner.example/many", ["order.created"]);
    const { deliveryIds } = await deliveriesTo(business, endpoint.id, 205);
    const newestFirst = [...deliveryIds].sort((a, b) => b - a);
    const seen: Array<[number, boolean]> = [];
    const listed: number[] = [];
    let query = "?limit=100";
    for (;;) {
      const page = await listDeliveries(apiKey, endpoint.id, query);
      seen.push([page.data.length, page.has_more]);
      listed.push(...page.data.map((delivery) => delivery.id));
      if (!page.has_more) break;
      query = `?limit=100&starting_after=${page.data.at(-1)?.id}`;
    }
    expect(seen).toEqual([
      [100, true],
      [100, true],
      [5, false],
    ]);
    expect(listed).toEqual(newestFirst);
    // 25 by default; a cursor is a position, so the oldest delivery's id ends the list.
    expect((await listDeliveries(apiKey, endpoint.id)).data.map((d) => d.id)).toEqual(newestFirst.slice(0, 25));
    expect(await listDeliveries(apiKey, endpoint.id, `?starting_after=${newestFirst.at(-1)}`)).toEqual({
      data: [],
      has_more: false,
    });
  });

  it("lists only the last 30 days", async () => {
    const endpoint = await subscribe(apiKey, "https://partner.example/month", ["order.created"]);
    const { deliveryIds } = await deliveriesTo(business, endpoint.id, 2);
    const [old = 0, kept = 0] = deliveryIds;
    await happenedAt([old], Date.now() - KEPT_FOR_MS - 60_000);
    await happenedAt([kept], Date.now() - KEPT_FOR_MS + HOUR);
    expect((await listDeliveries(apiKey, endpoint.id)).data.map((d) => d.id)).toEqual([kept]);
    await expectError(await redeliver(apiKey, endpoint.id, old), 404, DELIVERY_NOT_FOUND);
  });

  it.each([
    ["limit=0", 'The query parameter "limit" must be a whole number from 1 to 100.'],
    ["limit=101", 'The query parameter "limit" must be a whole number from 1 to 100.'],
    ["limit=1.5", 'The query parameter "limit" must be a whole number from 1 to 100.'],
    ["status=sent", 'The query parameter "status" must be pending, delivered or failed.'],
    ["starting_after=0", 'The query parameter "starting_after" must be a delivery id: a whole number from 1.'],
    ["starting_after=abc", 'The query parameter "starting_after" must be a delivery id: a whole number from 1.'],
  ])("refuses %s with a 400 naming the parameter", async (query, sentence) => {
    await expectError(await call(deliveriesPath(ok.id, `?${query}`), { key: apiKey }), 400, sentence);
  });

  it("answers a path id that is not one with the endpoint's 404", async () => {
    await expectError(await call(deliveriesPath("abc"), { key: apiKey }), 404, ENDPOINT_NOT_FOUND);
    await expectError(await call(deliveriesPath(999_999_999), { key: apiKey }), 404, ENDPOINT_NOT_FOUND);
  });
});

describe("whose endpoints and deliveries", async () => {
  const owner = await createOwnerBusiness();
  const { business, apiKey } = owner;
  const secondKey = await createApiKey(business.id);
  const app = await connectApp(owner);
  const appToken = app.tokens.access_token;
  const other = await createBusiness();
  const keysEndpoint = await subscribe(apiKey, "https://partner.example/keys", ["lead.created"]);
  const appEndpoint = await subscribe(appToken, "https://partner.example/app", ["lead.created"]);
  const theirEndpoint = await subscribe(other.apiKey, "https://partner.example/theirs", ["lead.created"]);
  const [keysDelivery = 0] = (await deliveriesTo(business, keysEndpoint.id, 1)).deliveryIds;
  const [appDelivery = 0] = (await deliveriesTo(business, appEndpoint.id, 1)).deliveryIds;
  const [theirDelivery = 0] = (await deliveriesTo(other.business, theirEndpoint.id, 1)).deliveryIds;
  const since = iso(Date.now() - HOUR);

  it("lets every API key of the business reach the keys' endpoint, and the app its own", async () => {
    for (const key of [apiKey, secondKey.apiKey]) {
      expect((await listDeliveries(key, keysEndpoint.id)).data.map((d) => d.id)).toEqual([keysDelivery]);
    }
    expect((await listDeliveries(appToken, appEndpoint.id)).data.map((d) => d.id)).toEqual([appDelivery]);
  });

  it.each([
    ["the app, the keys' endpoint", () => appToken, () => keysEndpoint.id, () => keysDelivery],
    ["a key, the app's endpoint", () => apiKey, () => appEndpoint.id, () => appDelivery],
    ["a key, another business's endpoint", () => apiKey, () => theirEndpoint.id, () => theirDelivery],
  ])(
    "answers %s with the 404 of a missing endpoint, on every route, writing nothing",
    async (_case, key, id, delivery) => {
      const ofBoth = inArray(webhookDeliveries.businessId, [business.id, other.business.id]);
      const before = await db.$count(webhookDeliveries, ofBoth);
      await expectError(await call(deliveriesPath(id()), { key: key() }), 404, ENDPOINT_NOT_FOUND);
      await expectError(await redeliver(key(), id(), delivery()), 404, ENDPOINT_NOT_FOUND);
      await expectError(await recover(key(), id(), since), 404, ENDPOINT_NOT_FOUND);
      expect(await db.$count(webhookDeliveries, ofBoth)).toBe(before);
    },
  );

  it("answers a delivery of another endpoint, or none, with the delivery's 404", async () => {
    for (const deliveryId of [appDelivery, theirDelivery, 999_999_999, "abc"]) {
      await expectError(await redeliver(apiKey, keysEndpoint.id, deliveryId), 404, DELIVERY_NOT_FOUND);
    }
  });

  it("shows the owner the same deliveries on the endpoint's page, for every side, 50 a page", async () => {
    const jar = await signedIn(owner);
    const { deliveryIds } = await deliveriesTo(business, appEndpoint.id, 60);
    const newestFirst = [appDelivery, ...deliveryIds].sort((a, b) => b - a);
    const api = await listDeliveries(appToken, appEndpoint.id, "?limit=50");
    const first = await page(jar, `/dashboard/webhooks/${appEndpoint.id}`);
    const shown = (html: string) =>
      [...html.matchAll(/data-testid="delivery-(\d+)"/g)].map((match) => Number(match[1]));
    expect(shown(first.html)).toEqual(api.data.map((delivery) => delivery.id));
    expect(shown(first.html)).toEqual(newestFirst.slice(0, 50));
    const older = `/dashboard/webhooks/${appEndpoint.id}?starting_after=${newestFirst[49]}`;
    expect(first.html).toContain(`href="${older}"`);
    const second = await page(jar, older);
    expect(shown(second.html)).toEqual(newestFirst.slice(50));
    expect(second.html).not.toContain("Older deliveries");
  });
});

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
    expect(response.status, await response.clone().text()).toBe(202);
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

    expect((await redeliver(apiKey, endpoint.id, id)).status).toBe(202);
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
    expect(response.status).toBe(202);
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

    expect((await redeliver(apiKey, endpoint.id, id)).status).toBe(202);
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
    expect((await redeliver(apiKey, endpoint.id, id)).status).toBe(202);
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
    expect(Math.abs(Number(refused.headers.get("Retry-After")) - secondsLeftInHour)).toBeLessThanOrEqual(2);
    expect(refused.headers.get("RateLimit-Limit")).toBe(String(SENDS_PER_HOUR));
    expect(refused.headers.get("RateLimit-Remaining")).toBe("0");
    await expectError(
      refused,
      429,
      `A webhook endpoint can be sent at most ${SENDS_PER_HOUR} redeliveries and test events an hour; try again when the hour is up.`,
    );
    const accepted = answers.find((answer) => answer.status === 202) as Response;
    expect(accepted.headers.get("RateLimit-Limit")).toBe(String(SENDS_PER_HOUR));
    expect(accepted.headers.get("RateLimit-Policy")).toBe(`${SENDS_PER_HOUR};w=3600`);

    // Test events count in the same budget; another endpoint has its own.
    expect((await call(`/api/v1/webhooks/${busy.id}/test`, { key: apiKey, method: "POST", body: {} })).status).toBe(
      429,
    );
    const elsewhere = await redeliver(apiKey, quiet.id, quietDelivery);
    expect(elsewhere.status).toBe(202);
    expect(elsewhere.headers.get("RateLimit-Remaining")).toBe(String(SENDS_PER_HOUR - 1));
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
      expect(response.status).toBe(202);
      expect(trips).toHaveLength(2);
      const listed = await roundTrips(deliveriesPath(target.id, "?limit=100"), { key });
      expect(listed.response.status).toBe(200);
      expect(listed.trips).toHaveLength(1);
    }
  });
});

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
    expect(response.status, await response.clone().text()).toBe(202);
    expect(await json(response)).toEqual({ queued: 2 });
    expect(response.headers.get("RateLimit-Limit")).toBe(String(RECOVERS_PER_HOUR));

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

  it("asks for 3,000 failed deliveries in one write: two round trips, 30 queue batches, each marked enqueued", async () => {
    const { business, apiKey } = await createBusiness();
    const endpoint = await subscribe(apiKey, "https://partner.example/big", ["lead.created"]);
    const COUNT = 3000;
    const at = iso(Date.now() - 5 * HOUR);
    const failedAt = iso(Date.now() - 2 * HOUR);
    const prefix = `evt_bulk${crypto.randomUUID().slice(0, 8)}_`;
    // A month's failures, written as the consumer leaves them (the fixture, in two statements).
    await env.DB.prepare(
      `insert into events (id, business_id, type, envelope, audience, created_at)
       with recursive n(i) as (select 1 union all select i + 1 from n where i < ?1)
       select ?2 || i, ?3, 'lead.created', json_object('id', ?2 || i, 'event', 'lead.created'), null, ?4 from n`,
    )
      .bind(COUNT, prefix, business.id, at)
      .run();
    await env.DB.prepare(
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
    expect(response.status, await response.clone().text()).toBe(202);
    expect(await json(response)).toEqual({ queued: COUNT });
    expect(trips).toHaveLength(2);

    const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id));
    expect(rows).toHaveLength(COUNT);
    expect(
      rows.every(
        (row) =>
          row.status === "failed" && row.attemptCount === 6 && row.extraAttemptAt !== null && row.enqueuedAt !== null,
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
        const plan = await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
          .bind(...fillPlaceholders(params, write.values))
          .all<{ detail: string }>();
        return plan.results.map((step) => step.detail).join("; ");
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
