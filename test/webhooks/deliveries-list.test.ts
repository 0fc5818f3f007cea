import { inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhookDeliveries } from "../../src/db/schema";
import { KEPT_FOR_MS } from "../../src/domain/webhooks/event-log";
import { page, signedIn } from "../helpers/dashboard";
import {
  DELIVERY_NOT_FOUND,
  deliveriesPath,
  deliveriesTo,
  ENDPOINT_NOT_FOUND,
  failAllAttempts,
  HOUR,
  happenedAt,
  iso,
  listDeliveries,
  recover,
  redeliver,
} from "../helpers/deliveries-api";
import { createApiKey, createBusiness, db } from "../helpers/fixtures";
import { call, expectError } from "../helpers/http";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import { consume, subscribe } from "../helpers/webhooks";

// docs/webhooks.md, Deliveries, redelivery and recovery: deliveries of one endpoint, for its owner side only: the list
// with every attempt, a redelivery now, and recover of everything that failed since a time; both through the outbox and
// the real queue.

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

  it("shows the owner the same deliveries on the endpoint's page, for every side, 20 a page", async () => {
    const jar = await signedIn(owner);
    const { deliveryIds } = await deliveriesTo(business, appEndpoint.id, 60);
    const newestFirst = [appDelivery, ...deliveryIds].sort((a, b) => b - a);
    const api = await listDeliveries(appToken, appEndpoint.id, "?limit=20");
    const first = await page(jar, `/dashboard/webhooks/${appEndpoint.id}`);
    const shown = (html: string) =>
      [...html.matchAll(/data-testid="delivery-(\d+)"/g)].map((match) => Number(match[1]));
    expect(shown(first.html)).toEqual(api.data.map((delivery) => delivery.id));
    expect(shown(first.html)).toEqual(newestFirst.slice(0, 20));
    // The owner's pages: docs/decisions.md, The owner's dashboard (test/dashboard/endpoint-deliveries.test.ts).
    const older = `/dashboard/webhooks/${appEndpoint.id}?older=${newestFirst[19]}`;
    expect(first.html).toContain(`href="${older}"`);
    const second = await page(jar, older);
    expect(shown(second.html)).toEqual(newestFirst.slice(20, 40));
  });
});
