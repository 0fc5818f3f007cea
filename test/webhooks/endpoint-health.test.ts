import { and, eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import { RETRY_DELAYS_SECONDS } from "../../src/domain/webhooks/attempts";
import { timeText } from "../../src/routes/dashboard/time-text";
import { page, signedIn, testIdText } from "../helpers/dashboard";
import { createApiKey, createBusiness, db, SHARD_D1_BINDING, shardD1 } from "../helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "../helpers/http";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { bookingObject, reportChange } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { consumeBatch, outboxOnly, subscribe } from "../helpers/webhooks";

// docs/webhooks.md, Endpoint health. An endpoint is disabled when it answers 410 Gone, or when every
// delivery attempt to it for 3 days has failed (at least 10 failed deliveries and none delivered in that time): it
// then gets no new deliveries (pending ones finish their schedule), the owner's overview shows it, and the events stay
// listable and recoverable. POST /api/v1/webhooks/{id}/enable → 200 the endpoint, enabled again.

type Endpoint = {
  id: number;
  url: string;
  status: "enabled" | "disabled";
  disabled_reason: string | null;
  last_success_at: string | null;
  created_at: string;
};

const DAY = 24 * 3_600_000;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
// The consumer's clock in the tests that drive it: in the future, so that the outbox sweep (on the real clock) never
// takes their deliveries for lost ones.
const T0 = Date.parse("2030-01-07T10:00:00.000Z");

let nextBooking = 970_000;

/** The endpoint `id` as `GET /webhooks` shows it to `credential`. */
async function listed(credential: string, id: number) {
  const response = await call("/api/v1/webhooks", { key: credential });
  await expect(response).toHaveStatus(200);
  const endpoint = (await json<{ data: Endpoint[] }>(response)).data.find((row) => row.id === id);
  if (!endpoint) throw new Error(`endpoint ${id} is not listed`);
  return endpoint;
}

const enable = (credential: string | undefined, id: number | string) =>
  call(`/api/v1/webhooks/${id}/enable`, { key: credential, method: "POST" });

/** Reports a new booking (the core platform's report): every endpoint subscribed to booking.created gets it. */
async function reportBooking(businessId: string) {
  const response = await reportChange(businessId, { booking: bookingObject(nextBooking++) });
  await expect(response).toHaveStatus(201);
}

const deliveriesTo = (endpointId: number) =>
  db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId));

const received = async (box: ReturnType<typeof receiverBox>, count: number) =>
  vi.waitFor(async () => expect(await box.recorded()).toHaveLength(count), { timeout: 10_000, interval: 50 });

describe("an endpoint that answers 410 Gone", async () => {
  const shop = await createOwnerBusiness();
  const goneBox = receiverBox("gone");
  const aliveBox = receiverBox("alive");
  const gone = await subscribe(shop.apiKey, goneBox.url("/status/410"), ["booking.created"]);
  const alive = await subscribe(shop.apiKey, aliveBox.url("/hooks"), ["booking.created"]);

  it("is disabled at once, saying why, while another endpoint keeps receiving and records its last success", async () => {
    await reportBooking(shop.business.id);
    await received(goneBox, 1);
    await received(aliveBox, 1);
    await vi.waitFor(async () => expect((await listed(shop.apiKey, gone.id)).status).toBe("disabled"));

    const disabled = await listed(shop.apiKey, gone.id);
    expect(disabled).toMatchObject({ status: "disabled", last_success_at: null });
    expect(disabled.disabled_reason).toMatch(
      /^The endpoint answered 410 Gone at \d{4}-\d{2}-\d{2}T[\d:.]+Z, so it gets no new deliveries until it is enabled again\.$/,
    );
    await vi.waitFor(async () => expect((await listed(shop.apiKey, alive.id)).last_success_at).toMatch(TIMESTAMP));
    expect(await listed(shop.apiKey, alive.id)).toMatchObject({ status: "enabled", disabled_reason: null });
  });

  it("gets no new deliveries while disabled; the other endpoint does", async () => {
    await reportBooking(shop.business.id);
    await received(aliveBox, 2);
    expect(await deliveriesTo(gone.id)).toHaveLength(1);
    expect(await deliveriesTo(alive.id)).toHaveLength(2);
    expect(await goneBox.recorded()).toHaveLength(1);
  });

  it("is shown on the owner's overview, with its reason and a link to it", async () => {
    const overview = await page(await signedIn(shop), "/dashboard");
    const section = testIdText(overview.html, "disabled-endpoints");
    expect(section).toContain(`${goneBox.url("/status/410")} : The endpoint answered 410 Gone at`);
    // The time in the reason, stored in UTC, is shown in the business's zone, the instant kept in <time>.
    const goneAt = /Gone at (\S+), so/.exec((await listed(shop.apiKey, gone.id)).disabled_reason ?? "")?.[1] ?? "";
    expect(overview.html).toContain(
      `Gone at <time datetime="${goneAt}">${timeText(goneAt, "Europe/Amsterdam", "second")}</time>, so it gets`,
    );
    expect(section).toContain("Added with an API key");
    expect(section).not.toContain(aliveBox.url("/hooks"));
    expect(overview.html).toContain(`href="/dashboard/webhooks/${gone.id}"`);
  });

  it("is enabled again by its partner (200, the endpoint), and then receives new events", async () => {
    const response = await enable(shop.apiKey, gone.id);
    await expect(response).toHaveStatus(200);
    const body = await json<Endpoint>(response);
    expect(body).toEqual({
      id: gone.id,
      url: goneBox.url("/status/410"),
      events: ["booking.created"],
      description: "",
      status: "enabled",
      disabled_reason: null,
      last_success_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
    });
    expect(await listed(shop.apiKey, gone.id)).toEqual(body);
    const overview = await page(await signedIn(shop), "/dashboard");
    expect(testIdText(overview.html, "disabled-endpoints")).toBe("");

    await reportBooking(shop.business.id);
    await received(goneBox, 2);
    await received(aliveBox, 3);
    expect(await deliveriesTo(gone.id)).toHaveLength(2);
  });

  it("answers 200 with the endpoint as it is when it is enabled already", async () => {
    const before = await listed(shop.apiKey, alive.id);
    const response = await enable(shop.apiKey, alive.id);
    await expect(response).toHaveStatus(200);
    expect(await json(response)).toEqual(before);
  });
});

describe("POST /webhooks/{id}/enable: who may", async () => {
  const shop = await createOwnerBusiness();
  const app = await connectApp(shop);
  const stranger = await createBusiness();
  const keyEndpoint = await subscribe(shop.apiKey, "https://partner.example/key-side");
  const appEndpoint = await subscribe(app.tokens.access_token, "https://partner.example/app-side");
  const reason = "The endpoint answered 410 Gone at 2030-01-07T10:00:00.000Z.";
  for (const id of [keyEndpoint.id, appEndpoint.id]) {
    await db
      .update(webhookEndpoints)
      .set({ status: "disabled", disabledReason: reason })
      .where(eq(webhookEndpoints.id, id));
  }
  const stateOf = async (id: number) =>
    (await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get())?.status;

  it("answers 401 without a valid credential", async () => {
    await expectMissingCredential(await enable(undefined, keyEndpoint.id));
    const revoked = await createApiKey(shop.business.id, { revoked: true });
    await expectError(await enable(revoked.apiKey, keyEndpoint.id), 401, /revoked/);
    expect(await stateOf(keyEndpoint.id)).toBe("disabled");
  });

  it("answers 404 for another side's endpoint, another business's, or an id that is none, and enables nothing", async () => {
    const notFound = "No webhook endpoint with that id exists for this business.";
    // The business's key does not reach the app's endpoint, nor the app the keys' (docs/architecture.md, Principals and
    // owner sides).
    await expectError(await enable(shop.apiKey, appEndpoint.id), 404, notFound);
    await expectError(await enable(app.tokens.access_token, keyEndpoint.id), 404, notFound);
    await expectError(await enable(stranger.apiKey, keyEndpoint.id), 404, notFound);
    for (const id of ["abc", "0", "-1", "1.5", "99999999999999999999"]) {
      await expectError(await enable(shop.apiKey, id), 404, notFound);
    }
    expect(await stateOf(keyEndpoint.id)).toBe("disabled");
    expect(await stateOf(appEndpoint.id)).toBe("disabled");
  });

  it("enables the endpoint of the caller's own side, with a key and with an app's token", async () => {
    const byKey = await enable(shop.apiKey, keyEndpoint.id);
    await expect(byKey).toHaveStatus(200);
    expect(await json(byKey)).toMatchObject({ id: keyEndpoint.id, status: "enabled", disabled_reason: null });
    const byApp = await enable(app.tokens.access_token, appEndpoint.id);
    await expect(byApp).toHaveStatus(200);
    expect(await json(byApp)).toMatchObject({ id: appEndpoint.id, status: "enabled", disabled_reason: null });
  });
});

/**
 * An endpoint whose receiver answers after 500 ms: an attempt with the 10 seconds of docs/guides/webhooks.md, Answering,
 * retries and the schedule succeeds, one with a 50 ms
 * answer time fails (a timeout). So each attempt's outcome is the test's to choose, on the consumer's driven clock.
 * The gap is wide so that a runtime kept off the CPU (the suite runs beside the static checks) still sees its 50 ms
 * timer fire before the answer: at 200 ms a stall of 150 ms let an attempt meant to fail succeed.
 */
async function slowEndpoint(name: string) {
  const { business, apiKey } = await createBusiness();
  const endpoint = await subscribe(apiKey, receiverBox(name).url("/delay/500"), ["review.created"]);
  const deliveries = async (count: number) => {
    const drafts = Array.from({ length: count }, (_, i) => ({
      event: "review.created" as const,
      data: { review: { id: i } },
    }));
    return (await outboxOnly(business, drafts)).deliveryIds;
  };
  return { apiKey, endpoint, deliveries };
}

/**
 * The rows D1 read to record the attempts of one queue batch of `ids` at T0 (the consumer's second batch: the first
 * claims), with the endpoints' health.
 */
async function rowsReadRecording(ids: number[], options: { answerTimeoutMs?: number } = {}) {
  const read: number[] = [];
  const d1 = new Proxy(shardD1, {
    get(target, key) {
      if (key === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          const results = await target.batch(statements);
          read.push(results.reduce((sum, result) => sum + (result.meta.rows_read ?? 0), 0));
          return results;
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  await consumeBatch(ids, T0, { ...options, bindings: { [SHARD_D1_BINDING]: d1 } });
  return read[1];
}

/** Every attempt of the schedule fails (six, 1, 5, 30, 120 and 720 minutes apart), from `from`: answers when the last did. */
async function failEveryAttempt(ids: number[], from: number) {
  let clock = from;
  for (const delay of [...RETRY_DELAYS_SECONDS, 0]) {
    const outcomes = await consumeBatch(ids, clock, { answerTimeoutMs: 50 });
    expect(outcomes.every((outcome) => outcome.acked === (delay === 0))).toBe(true);
    clock += delay * 1000;
  }
  const rows = await Promise.all(
    ids.map((id) => db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get()),
  );
  expect(rows.every((row) => row?.status === "failed")).toBe(true);
  return clock;
}

/** One delivery that succeeds at `at`. */
async function succeedAt(deliveries: (count: number) => Promise<number[]>, at: number) {
  expect(await consumeBatch(await deliveries(1), at)).toEqual([{ acked: true, retryDelay: undefined }]);
}

describe("an endpoint whose every delivery fails for 3 days", () => {
  it("is disabled once 3 days have passed since its last success with at least 10 failed deliveries, not before", {
    timeout: 20_000,
  }, async () => {
    const { apiKey, endpoint, deliveries } = await slowEndpoint("three-days");
    await succeedAt(deliveries, T0);
    const lastSuccess = (await listed(apiKey, endpoint.id)).last_success_at;
    expect(lastSuccess).toBe(new Date(T0).toISOString());

    // Ten deliveries fail their six attempts from day 2 on: ten failed, but not yet 3 days without a success.
    await failEveryAttempt(await deliveries(10), T0 + 2 * DAY);
    expect(await listed(apiKey, endpoint.id)).toMatchObject({ status: "enabled", disabled_reason: null });

    // The next failed attempt, 3 days and an hour after the last success: disabled.
    const [next] = await deliveries(1);
    await consumeBatch([next ?? 0], T0 + 3 * DAY + 3_600_000, { answerTimeoutMs: 50 });
    expect(await listed(apiKey, endpoint.id)).toMatchObject({
      status: "disabled",
      last_success_at: lastSuccess,
      disabled_reason: `Every delivery to the endpoint failed for 3 days (none succeeded since ${lastSuccess}, and at least 10 failed), so it gets no new deliveries until it is enabled again.`,
    });
    // No new deliveries while disabled: an event now writes none for it.
    expect(await deliveries(1)).toEqual([]);
  });

  it("is not disabled with 9 failed deliveries in those 3 days", async () => {
    const { apiKey, endpoint, deliveries } = await slowEndpoint("nine");
    await succeedAt(deliveries, T0);
    await failEveryAttempt(await deliveries(9), T0 + 2 * DAY);
    const [next] = await deliveries(1);
    await consumeBatch([next ?? 0], T0 + 3 * DAY + 3_600_000, { answerTimeoutMs: 50 });
    expect(await listed(apiKey, endpoint.id)).toMatchObject({ status: "enabled", disabled_reason: null });
  });

  it("is not disabled when one delivery succeeded within the 3 days", { timeout: 20_000 }, async () => {
    const { apiKey, endpoint, deliveries } = await slowEndpoint("one-success");
    await succeedAt(deliveries, T0);
    await failEveryAttempt(await deliveries(10), T0 + DAY);
    await succeedAt(deliveries, T0 + 2 * DAY);
    const [next] = await deliveries(1);
    await consumeBatch([next ?? 0], T0 + 3 * DAY + 3_600_000, { answerTimeoutMs: 50 });
    expect(await listed(apiKey, endpoint.id)).toMatchObject({
      status: "enabled",
      last_success_at: new Date(T0 + 2 * DAY).toISOString(),
    });
  });

  it("never moves its last success back for a batch recorded later with an older attempt", async () => {
    const { apiKey, endpoint, deliveries } = await slowEndpoint("never-back");
    await succeedAt(deliveries, T0 + DAY);
    await succeedAt(deliveries, T0);
    expect((await listed(apiKey, endpoint.id)).last_success_at).toBe(new Date(T0 + DAY).toISOString());
  });

  it("records a success by its endpoint's id: more deliveries stored cost no more rows read", async () => {
    const { endpoint, deliveries } = await slowEndpoint("success-reads");
    const first = await rowsReadRecording(await deliveries(1));
    // 300 more deliveries in the table, of another endpoint.
    await (await slowEndpoint("success-reads-other")).deliveries(300);
    expect(await rowsReadRecording(await deliveries(1))).toBe(first);
    const row = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id)).get();
    expect(Date.parse(row?.lastSuccessAt ?? "")).toBeGreaterThanOrEqual(T0);
  });

  it("judges by a range of its recent failures: a long history costs no more rows read", async () => {
    // Two endpoints alike but for 300 deliveries that failed long ago on the first.
    const withHistory = await slowEndpoint("history");
    const without = await slowEndpoint("no-history");
    const [old] = await withHistory.deliveries(1);
    const oldRow = await db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.id, old ?? 0))
      .get();
    if (!oldRow) throw new Error("no delivery");
    const longAgo = new Date(T0 - 30 * DAY).toISOString();
    const history = Array.from({ length: 300 }, () => ({
      businessId: oldRow.businessId,
      eventId: oldRow.eventId,
      endpointId: withHistory.endpoint.id,
      status: "failed" as const,
      attemptCount: 6,
      nextAttemptAt: longAgo,
      completedAt: longAgo,
      createdAt: longAgo,
    }));
    for (let i = 0; i < history.length; i += 10) await db.insert(webhookDeliveries).values(history.slice(i, i + 10));

    const failing = and(
      eq(webhookDeliveries.status, "failed"),
      eq(webhookDeliveries.endpointId, withHistory.endpoint.id),
    );
    expect(await db.$count(webhookDeliveries, failing)).toBe(300);
    const readWithHistory = await rowsReadRecording(await withHistory.deliveries(1), { answerTimeoutMs: 50 });
    const readWithout = await rowsReadRecording(await without.deliveries(1), { answerTimeoutMs: 50 });
    expect(readWithHistory).toBeDefined();
    expect(readWithHistory).toBe(readWithout);
    expect(await listed(withHistory.apiKey, withHistory.endpoint.id)).toMatchObject({ status: "enabled" });
  });
});
