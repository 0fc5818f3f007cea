import { env } from "cloudflare:test";
import { and, eq, inArray } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { events, webhookDeliveries, webhookEndpoints } from "../src/db/schema";
import type { Business } from "../src/domain/access/businesses";
import { RETRY_DELAYS_SECONDS } from "../src/domain/webhooks/attempts";
import { RECOVERS_PER_HOUR, SENDS_PER_HOUR } from "../src/domain/webhooks/endpoint-budgets";
import { KEPT_FOR_MS } from "../src/domain/webhooks/event-log";
import type { DeliveryMessage } from "../src/queues/delivery-message";
import { page, signedIn } from "./helpers/dashboard";
import { createApiKey, createBusiness, db } from "./helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "./helpers/http";
import { connectApp, createOwnerBusiness } from "./helpers/oauth";
import { awayFromWindowEdge } from "./helpers/rate-limit-window";
import { receiverBox } from "./helpers/receiver";
import { roundTrips } from "./helpers/round-trips";
import { verifyWebhookSignature } from "./helpers/verify-signature";
import { attemptsOf, consume, consumeBatch, deliveryRow, outboxOnly, subscribe } from "./helpers/webhooks";

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
  const box = receiverBox("redeliver");
  const endpoint = await subscribe(apiKey, box.url("/hooks"), ["lead.created"]);

  it("sends the same envelope again now, as a new delivery, freshly signed, and keeps the original's history", async () => {
    const {
      eventIds: [eventId],
      deliveryIds: [original = 0],
    } = await deliveriesTo(business, endpoint.id, 1);
    // The original was attempted an hour from now on the consumer's clock: its signature carries that time.
    const attemptedAt = Date.now() + HOUR;
    expect(await consume(original, attemptedAt)).toEqual({ acked: true, retryDelay: undefined });

    const response = await redeliver(apiKey, endpoint.id, original);
    expect(response.status, await response.clone().text()).toBe(202);
    const { delivery_id: copy, event_id } = await json<{ delivery_id: number; event_id: string }>(response);
    expect(event_id).toBe(eventId);
    expect(copy).toBeGreaterThan(original);

    const [first, again] = await box.arrived(2);
    expect(again?.body).toBe(first?.body);
    expect(JSON.parse(again?.body ?? "{}").id).toBe(eventId);
    expect(first?.headers["x-service-delivery"]).toBe(String(original));
    expect(again?.headers["x-service-delivery"]).toBe(String(copy));
    // The original's signature is of its own time; the redelivery's, of now: it verifies, the old one no longer would.
    expect(first?.headers["x-service-signature"]).toMatch(new RegExp(`^t=${Math.floor(attemptedAt / 1000)},`));
    expect(
      await verifyWebhookSignature(first?.body ?? "", first?.headers["x-service-signature"] ?? "", endpoint.secret),
    ).toBe(false);
    expect(
      await verifyWebhookSignature(again?.body ?? "", again?.headers["x-service-signature"] ?? "", endpoint.secret),
    ).toBe(true);

    const history = await vi.waitFor(async () => {
      const listed = await listDeliveries(apiKey, endpoint.id);
      expect(listed.data[0]?.status).toBe("delivered");
      return listed;
    });
    expect(history.data.map((delivery) => [delivery.id, delivery.event_id, delivery.attempts.length])).toEqual([
      [copy, eventId, 1],
      [original, eventId, 1],
    ]);
    expect(history.data[1]?.attempts[0]?.attempted_at).toBe(iso(attemptedAt));
  });

  it("leaves a pending delivery on its own schedule", async () => {
    const failingEndpoint = await subscribe(apiKey, receiverBox("pending").url("/status/500"), ["review.created"]);
    const {
      deliveryIds: [pending = 0],
    } = await deliveriesTo(business, failingEndpoint.id, 1);
    const T0 = Date.now();
    expect(await consume(pending, T0)).toEqual({ acked: false, retryDelay: 60 });
    const before = await deliveryRow(pending);
    const response = await redeliver(apiKey, failingEndpoint.id, pending);
    expect(response.status).toBe(202);
    const { delivery_id: copy } = await json<{ delivery_id: number }>(response);
    await vi.waitFor(async () => expect(await attemptsOf(copy)).toHaveLength(1), { timeout: 10_000 });
    expect(await deliveryRow(pending)).toEqual(before);
    expect(await deliveryRow(copy)).toMatchObject({ status: "pending", attemptCount: 1, eventId: before?.eventId });
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
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, busy.id))).toBe(SENDS_PER_HOUR + 1);

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
  it("gives a receiver that was down for a day every delivery it missed, once, through the real queue", async () => {
    const { business, apiKey } = await createBusiness();
    const MISSED = 10;
    // The receiver fails the first requests of its box (every attempt of the outage below), then answers 200.
    const box = receiverBox("down-a-day");
    const endpoint = await subscribe(apiKey, box.url(`/fail-first/${(MISSED + 1) * 6 + 1}`), ["lead.created"]);
    const neighbour = await subscribe(apiKey, receiverBox("neighbour").url("/status/500"), ["review.created"]);
    const downSince = Date.now() - 26 * HOUR;

    // A failure older than the outage, which the partner does not ask for.
    const earlier = await deliveriesTo(business, endpoint.id, 1);
    await happenedAt(earlier.deliveryIds, downSince - 16 * HOUR);
    expect(await failAllAttempts(earlier.deliveryIds, downSince - 16 * HOUR)).toBeLessThan(downSince);
    // The day down: every delivery of MISSED events fails all six attempts, over about 15 hours.
    const missed = await deliveriesTo(business, endpoint.id, MISSED);
    await happenedAt(missed.deliveryIds, downSince);
    await failAllAttempts(missed.deliveryIds, downSince);
    // One still on its schedule, and another endpoint's failure: neither is the recover's.
    const retrying = await deliveriesTo(business, endpoint.id, 1);
    await happenedAt(retrying.deliveryIds, downSince + 20 * HOUR);
    await consume(retrying.deliveryIds[0] ?? 0, downSince + 20 * HOUR);
    const elsewhere = await deliveriesTo(business, neighbour.id, 1);
    await happenedAt(elsewhere.deliveryIds, downSince);
    await failAllAttempts(elsewhere.deliveryIds, downSince);

    const response = await recover(apiKey, endpoint.id, iso(downSince));
    expect(response.status, await response.clone().text()).toBe(202);
    expect(await json(response)).toEqual({ queued: MISSED });
    expect(response.headers.get("RateLimit-Limit")).toBe(String(RECOVERS_PER_HOUR));

    const delivered = await vi.waitFor(
      async () => {
        const page = await listDeliveries(apiKey, endpoint.id, "?status=delivered&limit=100");
        if (page.data.length < MISSED) throw new Error(`${page.data.length} delivered so far`);
        return page.data;
      },
      { timeout: 15_000, interval: 200 },
    );
    expect(delivered.map((delivery) => delivery.event_id).sort()).toEqual([...missed.eventIds].sort());
    for (const delivery of delivered) {
      expect(delivery.attempts).toEqual([expect.objectContaining({ status_code: 200, error: null })]);
    }
    // The receiver got each missed envelope once more, under the new delivery's id, signed now.
    const recovered = (await box.recorded()).slice((MISSED + 1) * 6 + 1);
    expect(recovered.map((request) => JSON.parse(request.body).id).sort()).toEqual([...missed.eventIds].sort());
    expect(recovered.map((request) => Number(request.headers["x-service-delivery"])).sort()).toEqual(
      delivered.map((delivery) => delivery.id).sort(),
    );
    for (const request of recovered) {
      expect(
        await verifyWebhookSignature(request.body, request.headers["x-service-signature"] ?? "", endpoint.secret),
      ).toBe(true);
    }
    // The failures stay in the history as they were; nothing else was touched.
    const failed = await listDeliveries(apiKey, endpoint.id, "?status=failed&limit=100");
    expect(failed.data.map((delivery) => delivery.id).sort()).toEqual(
      [...earlier.deliveryIds, ...missed.deliveryIds].sort(),
    );
    expect((await deliveryRow(retrying.deliveryIds[0] ?? 0))?.status).toBe("pending");
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, neighbour.id))).toBe(1);

    // Asked again, it sends nothing twice.
    expect(await json(await recover(apiKey, endpoint.id, iso(downSince)))).toEqual({ queued: 0 });
  });

  it("queues 3,000 failed deliveries in one write: two round trips, 30 queue batches, each marked enqueued", async () => {
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

    const fresh = await db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.endpointId, endpoint.id), eq(webhookDeliveries.status, "pending")));
    expect(fresh).toHaveLength(COUNT);
    expect(new Set(fresh.map((delivery) => delivery.eventId)).size).toBe(COUNT);
    expect(fresh.every((delivery) => delivery.attemptCount === 0 && delivery.enqueuedAt !== null)).toBe(true);
    expect(batches).toHaveLength(COUNT / 100);
    expect(batches.every((batch) => batch.length === 100)).toBe(true);
    expect(batches.flat().sort((a, b) => a - b)).toEqual(fresh.map((delivery) => delivery.id).sort((a, b) => a - b));
    // Numbered in the order they were missed, one per failed delivery.
    const failed = await db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.endpointId, endpoint.id), eq(webhookDeliveries.status, "failed")));
    const eventsInOrder = (rows: typeof fresh) => [...rows].sort((a, b) => a.id - b.id).map((row) => row.eventId);
    expect(eventsInOrder(fresh)).toEqual(eventsInOrder(failed));

    expect(await json(await recover(apiKey, endpoint.id, iso(Date.now() - 24 * HOUR)))).toEqual({ queued: 0 });
    expect(await db.$count(events, eq(events.businessId, business.id))).toBe(COUNT);
  });

  it("queues each failed delivery once when recovers race", async () => {
    const { business, apiKey } = await createBusiness();
    const endpoint = await subscribe(apiKey, "https://partner.example/race", ["lead.created"]);
    const { deliveryIds } = await deliveriesTo(business, endpoint.id, 50);
    await db
      .update(webhookDeliveries)
      .set({ status: "failed", attemptCount: 6, completedAt: iso(Date.now() - HOUR) })
      .where(inArray(webhookDeliveries.id, deliveryIds));
    const { batches, queue } = recordingQueue();
    const answers = await Promise.all(
      Array.from({ length: 3 }, () =>
        call(recoverPath(endpoint.id), {
          key: apiKey,
          method: "POST",
          body: { since: iso(Date.now() - 2 * HOUR) },
          bindings: { WEBHOOK_DELIVERIES: queue },
        }),
      ),
    );
    const queued = await Promise.all(answers.map(async (answer) => (await json<{ queued: number }>(answer)).queued));
    expect(queued.reduce((sum, n) => sum + n, 0)).toBe(50);
    expect(batches.flat()).toHaveLength(50);
    expect(
      await db.$count(
        webhookDeliveries,
        and(eq(webhookDeliveries.endpointId, endpoint.id), eq(webhookDeliveries.status, "pending")),
      ),
    ).toBe(50);
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
