import { env } from "cloudflare:test";
import { and, eq, inArray, isNull } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { webhookDeliveries } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { disconnectApp } from "../../src/domain/access/app-connections";
import { MAX_APP_ENDPOINTS } from "../../src/domain/webhooks/app-endpoints";
import { RECOVERS_PER_HOUR, SENDS_PER_HOUR } from "../../src/domain/webhooks/endpoint-budgets";
import type { EventName } from "../../src/names-and-limits";
import { countingShards } from "../helpers/counting-d1";
import { DELIVERY_NOT_FOUND, type Delivery, DISABLED, HOUR, iso } from "../helpers/deliveries-api";
import { shardDependencies } from "../helpers/dependencies";
import { shardDb } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import {
  appTokenOf,
  connectClient,
  createOwnerBusiness,
  grantOf,
  type OwnerBusiness,
  type RegisteredClient,
  registerClient,
} from "../helpers/oauth";
import { queryPlan } from "../helpers/query-plan";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";
import { receiverBox } from "../helpers/receiver";
import { recordingDatabases } from "../helpers/recording-databases";
import { REGIONS } from "../helpers/shards";
import { verifyStandardWebhook } from "../helpers/verify-signature";
import { outboxOnly, subscribe } from "../helpers/webhooks";

// docs/guides/webhooks.md, Subscribing once as an app: an app endpoint's deliveries, redelivery and recover, and the
// events sent to the app's endpoints, across the businesses connected to it in eu1 and us1, with the app's own token.

type AppDelivery = Delivery & { business_id: string };
type AppPage = { data: AppDelivery[]; has_more: boolean };
type Envelope = { id: string; event: string; business: { id: string } };

const NOT_FOUND = "No webhook endpoint with that id exists for this app.";

const deliveriesPath = (endpointId: number | string, query = "") =>
  `/api/v1/app/webhooks/${endpointId}/deliveries${query}`;
const redeliverPath = (endpointId: number | string, deliveryId: number | string) =>
  `/api/v1/app/webhooks/${endpointId}/deliveries/${deliveryId}/redeliver`;
const recoverPath = (endpointId: number | string) => `/api/v1/app/webhooks/${endpointId}/recover`;

async function subscribeApp(token: string, url: string, events?: EventName[]) {
  const response = await call("/api/v1/app/webhooks", { key: token, method: "POST", body: { url, events } });
  await expect(response).toHaveStatus(201);
  return json<{ id: number; secret: string }>(response);
}

/** The app connected to a business in eu1 and one in us1 (then subscribed: no `app.connected` is sent to it). */
async function appOfTwoShards(box = receiverBox("app-history")) {
  const client = await registerClient();
  const lisbon = await createOwnerBusiness({ name: "Lisbon salon", shard: "eu1" });
  const austin = await createOwnerBusiness({ name: "Austin salon", shard: "us1" });
  await connectClient(client, lisbon);
  await connectClient(client, austin);
  const token = await appTokenOf(client);
  const endpoint = await subscribeApp(token, box.url("/hooks"));
  return { client, lisbon, austin, token, endpoint, box };
}

/** An event of the shop in the outbox, not enqueued: nothing is sent until the test asks. */
async function eventOf(shop: OwnerBusiness, event: EventName = "lead.created") {
  const { emitted } = await outboxOnly(shop.business, [{ event, data: { note: "hello" } }], shop.shard);
  return emitted[0]?.id ?? "";
}

/** The deliveries of the app's endpoints in both shards, as stored, newest first. */
async function stored(appEndpointIds: number[]) {
  const rows = await Promise.all(
    REGIONS.map((shard) =>
      shardDb(shard).select().from(webhookDeliveries).where(inArray(webhookDeliveries.appEndpointId, appEndpointIds)),
    ),
  );
  return rows.flat().sort((a, b) => b.id - a.id);
}

/** The deliveries as if they failed their six attempts, written `ago` milliseconds ago. */
async function failed(shard: ShardName, ids: number[], ago = 2 * HOUR) {
  await shardDb(shard)
    .update(webhookDeliveries)
    .set({ status: "failed", attemptCount: 6, createdAt: iso(Date.now() - ago), completedAt: iso(Date.now() - HOUR) })
    .where(inArray(webhookDeliveries.id, ids));
}

/** Every page of a list, by `starting_after` from the last item of each. */
async function allPages<T extends { id: number | string }>(token: string, path: (after?: string | number) => string) {
  const pages: { data: T[]; has_more: boolean }[] = [];
  let after: string | number | undefined;
  do {
    const response = await call(path(after), { key: token });
    await expect(response).toHaveStatus(200);
    pages.push(await json<{ data: T[]; has_more: boolean }>(response));
    after = pages.at(-1)?.data.at(-1)?.id;
  } while (pages.at(-1)?.has_more);
  return pages;
}

const disconnect = async (shop: OwnerBusiness, client: RegisteredClient) =>
  disconnectApp(shardDependencies(shop.shard), shop.business.id, (await grantOf(shop, client)).id);

describe("GET /app/webhooks/{id}/deliveries", () => {
  it("merges the deliveries of eu1 and us1 newest first, each with its business, paged across the shards", async () => {
    const { lisbon, austin, token, endpoint } = await appOfTwoShards();
    // The business's own endpoint and the app's other endpoint get the same events: not this endpoint's history.
    await subscribe(lisbon.apiKey, receiverBox().url("/own"));
    const other = await subscribeApp(token, receiverBox().url("/other"));
    const shops = [lisbon, austin, lisbon, austin, lisbon, austin];
    const events: string[] = [];
    for (const shop of shops) events.push(await eventOf(shop));
    const rows = await stored([endpoint.id]);
    expect(rows).toHaveLength(6);
    expect(await stored([other.id])).toHaveLength(6);

    const pages = await allPages<AppDelivery>(token, (after) =>
      deliveriesPath(endpoint.id, `?limit=2${after ? `&starting_after=${after}` : ""}`),
    );
    expect(pages.map((page) => [page.data.length, page.has_more])).toEqual([
      [2, true],
      [2, true],
      [2, false],
    ]);
    const listed = pages.flatMap((page) => page.data);
    expect(listed.map((delivery) => delivery.id)).toEqual(rows.map((row) => row.id));
    expect(listed.map((delivery) => delivery.event_id).sort()).toEqual([...events].sort());
    // A page ends in one shard and the next begins in the other.
    const shardOf = (delivery?: AppDelivery) => delivery?.business_id;
    expect(pages.slice(1).some((page, i) => shardOf(page.data[0]) !== shardOf(pages[i]?.data.at(-1)))).toBe(true);
    const [first] = listed;
    const row = rows[0];
    expect(first).toEqual({
      id: row?.id,
      event_id: row?.eventId,
      event: "lead.created",
      status: "pending",
      attempts: [],
      next_attempt_at: row?.nextAttemptAt,
      created_at: row?.createdAt,
      business_id: row?.businessId,
    });
    // The own endpoint's deliveries name no app endpoint.
    const own = await shardDb("eu1")
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.businessId, lisbon.business.id), isNull(webhookDeliveries.appEndpointId)));
    expect(own).toHaveLength(3);
  });

  it("narrows to one business, to one status, or both; a business with no copy has an empty page", async () => {
    const { client, lisbon, austin, token, endpoint } = await appOfTwoShards();
    for (const shop of [lisbon, austin, lisbon, austin]) await eventOf(shop);
    const rows = await stored([endpoint.id]);
    const ofShop = (shop: OwnerBusiness) => rows.filter((row) => row.businessId === shop.business.id);
    const [lisbonFailed] = ofShop(lisbon);
    const [austinFailed] = ofShop(austin);
    await failed("eu1", [lisbonFailed?.id ?? 0]);
    await failed("us1", [austinFailed?.id ?? 0]);
    const list = async (query: string) =>
      (await json<AppPage>(await call(deliveriesPath(endpoint.id, query), { key: token }))).data.map((d) => d.id);

    expect(await list(`?business=${austin.business.id}`)).toEqual(ofShop(austin).map((row) => row.id));
    const failedIds = [lisbonFailed?.id ?? 0, austinFailed?.id ?? 0];
    expect(await list("?status=failed")).toEqual(failedIds.sort((a, b) => b - a));
    expect(await list(`?status=pending&business=${lisbon.business.id}`)).toEqual(
      ofShop(lisbon)
        .slice(1)
        .map((row) => row.id),
    );
    // A business not connected to the app, and an id that names no business.
    const stranger = await createOwnerBusiness({ shard: "us1" });
    expect(await list(`?business=${stranger.business.id}`)).toEqual([]);
    expect(await list("?business=no-such-business")).toEqual([]);
    // A business that disconnected keeps its history (its copy is disabled).
    await disconnect(lisbon, client);
    expect(await list(`?status=failed&business=${lisbon.business.id}`)).toEqual([lisbonFailed?.id]);
  });
});

describe("an app's history refuses", () => {
  it("another app's endpoint (404), a missing or wrong token (401) and bad parameters (400)", async () => {
    const { austin, token, endpoint } = await appOfTwoShards();
    await eventOf(austin);
    const [delivery] = await stored([endpoint.id]);
    const stranger = await appTokenOf(await registerClient());
    const since = iso(Date.now() - HOUR);
    const routes = [
      { path: deliveriesPath(endpoint.id), method: "GET" },
      { path: redeliverPath(endpoint.id, delivery?.id ?? 0), method: "POST" },
      { path: recoverPath(endpoint.id), method: "POST", body: { since } },
    ];
    for (const route of routes) {
      await expectError(await call(route.path, { ...route, key: stranger }), 404, NOT_FOUND);
      await expectError(await call(route.path, route), 401, /An app access token is required/);
      await expectError(await call(route.path, { ...route, key: `at_app_${"x".repeat(43)}` }), 401, /app's own/);
      // A business's key, or a connection's token, is no app token.
      await expectError(await call(route.path, { ...route, key: austin.apiKey }), 401, /app's own/);
    }
    await expectError(await call("/api/v1/app/events"), 401, /An app access token is required/);
    await expectError(await call(deliveriesPath("abc"), { key: token }), 404, NOT_FOUND);

    const refused = async (path: string, param: string, options: { method?: string; body?: unknown } = {}) =>
      expectError(await call(path, { ...options, key: token }), 400, /./, { param });
    await refused(deliveriesPath(endpoint.id, "?limit=101"), "limit");
    await refused(deliveriesPath(endpoint.id, "?status=lost"), "status");
    await refused(deliveriesPath(endpoint.id, "?starting_after=abc"), "starting_after");
    await refused(deliveriesPath(endpoint.id, "?business="), "business");
    for (const bad of ["yesterday", iso(Date.now() + HOUR), iso(Date.now() - 31 * 24 * HOUR)]) {
      await refused(recoverPath(endpoint.id), "since", { method: "POST", body: { since: bad } });
    }
    // A member the body does not take is named, not refused (docs/guides/errors.md, Unknown members).
    const misspelt = await call(recoverPath(endpoint.id), {
      key: token,
      method: "POST",
      body: { since, bussiness: "shop" },
    });
    await expect(misspelt).toHaveStatus(202);
    expect(misspelt.headers.get("Ignored-Members")).toBe("bussiness");
    await refused("/api/v1/app/events?limit=101", "limit");
    await refused("/api/v1/app/events?type=lead.lost", "type");
    await refused("/api/v1/app/events?starting_after=42", "starting_after");
    // An event id the app's endpoints were not sent.
    await expectError(
      await call("/api/v1/app/events?starting_after=evt_nothing", { key: token }),
      400,
      /not the id of an event sent to this app's endpoints/,
      { param: "starting_after" },
    );
  });
});

describe("POST /app/webhooks/{id}/deliveries/{delivery_id}/redeliver", () => {
  it("makes one more attempt of a us1 delivery, to the app's receiver, signed with the app endpoint's secret", async () => {
    const { lisbon, austin, token, endpoint, box } = await appOfTwoShards(receiverBox("app-redeliver"));
    const eventId = await eventOf(austin);
    const [delivery] = await stored([endpoint.id]);
    const id = delivery?.id ?? 0;
    await failed("us1", [id]);

    const response = await call(redeliverPath(endpoint.id, id), { key: token, method: "POST" });
    await expect(response).toHaveStatus(202);
    expect(await json(response)).toEqual({ delivery_id: id, event_id: eventId });
    expect(response.headers.get("RateLimit-Policy")).toBe(
      `"requests";q=600;w=60, "webhook_sends";q=${SENDS_PER_HOUR};w=3600`,
    );
    const [request] = await box.arrived(1);
    expect(request?.headers["x-service-delivery"]).toBe(String(id));
    expect(await verifyStandardWebhook(request?.body ?? "", new Headers(request?.headers), endpoint.secret)).toBe(true);
    expect((JSON.parse(request?.body ?? "{}") as Envelope).business.id).toBe(austin.business.id);
    await vi.waitFor(
      async () => {
        const page = await json<AppPage>(await call(deliveriesPath(endpoint.id), { key: token }));
        expect(page.data[0]).toMatchObject({ id, status: "delivered" });
        expect(page.data[0]?.attempts.map((attempt) => attempt.status_code)).toEqual([200]);
      },
      { timeout: 10_000, interval: 100 },
    );

    // Neither a delivery of the business's own endpoint nor one of the app's other endpoint is this endpoint's.
    const own = await subscribe(lisbon.apiKey, receiverBox().url("/own"));
    const other = await subscribeApp(token, receiverBox().url("/other"));
    await eventOf(lisbon);
    const [ownDelivery] = await shardDb("eu1")
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, own.id));
    const [otherDelivery] = await stored([other.id]);
    for (const wrong of [ownDelivery?.id, otherDelivery?.id, 999_999]) {
      await expectError(
        await call(redeliverPath(endpoint.id, wrong ?? 0), { key: token, method: "POST" }),
        404,
        DELIVERY_NOT_FOUND,
      );
    }
  });

  it("refuses a delivery of a business that disconnected the app (409), as its disabled copy", async () => {
    const { client, lisbon, token, endpoint } = await appOfTwoShards();
    await eventOf(lisbon);
    const [delivery] = await stored([endpoint.id]);
    await failed("eu1", [delivery?.id ?? 0]);
    await disconnect(lisbon, client);
    await expectError(
      await call(redeliverPath(endpoint.id, delivery?.id ?? 0), { key: token, method: "POST" }),
      409,
      DISABLED,
      { code: "invalid_state" },
    );
    await expectError(
      await call(recoverPath(endpoint.id), {
        key: token,
        method: "POST",
        body: { since: iso(Date.now() - 3 * HOUR), business: lisbon.business.id },
      }),
      409,
      DISABLED,
    );
  });
});

describe("POST /app/webhooks/{id}/recover", () => {
  it("sends now the failed deliveries of every business in eu1 and us1, and counts them", async () => {
    const { client, lisbon, austin, token, endpoint, box } = await appOfTwoShards(receiverBox("app-recover"));
    const boston = await createOwnerBusiness({ shard: "us1" });
    await connectClient(client, boston);
    for (const shop of [lisbon, austin, boston, lisbon, austin]) await eventOf(shop);
    const rows = await stored([endpoint.id]);
    const [recentAustin, recentLisbon, bostons, olderAustin, olderLisbon] = rows;
    await failed("eu1", [olderLisbon?.id ?? 0]);
    await failed("us1", [olderAustin?.id ?? 0]);
    // Failed before `since`, delivered, and failed in a business that disconnected since: none is sent.
    await failed("eu1", [recentLisbon?.id ?? 0], 5 * HOUR);
    await shardDb("us1")
      .update(webhookDeliveries)
      .set({ status: "delivered", attemptCount: 1, completedAt: iso(Date.now()) })
      .where(eq(webhookDeliveries.id, recentAustin?.id ?? 0));
    await failed("us1", [bostons?.id ?? 0]);
    await disconnect(boston, client);
    const since = iso(Date.now() - 3 * HOUR);

    const response = await call(recoverPath(endpoint.id), { key: token, method: "POST", body: { since } });
    await expect(response).toHaveStatus(202);
    expect(await json(response)).toEqual({ queued: 2 });
    expect(response.headers.get("RateLimit")).toMatch(
      new RegExp(`^"webhook_recovers";r=${RECOVERS_PER_HOUR - 1};t=\\d+$`),
    );
    // `app.disconnected` went to Boston's copy before it was disabled; the two recovered follow.
    const requests = await box.arrived(3);
    const sent = requests.map((request) => Number(request.headers["x-service-delivery"]));
    expect(sent).toEqual(expect.arrayContaining([olderLisbon?.id, olderAustin?.id]));
    expect(sent).not.toContain(bostons?.id);
    await vi.waitFor(
      async () => {
        const page = await json<AppPage>(await call(deliveriesPath(endpoint.id, "?status=delivered"), { key: token }));
        expect(page.data.map((delivery) => delivery.id)).toEqual(
          expect.arrayContaining([olderLisbon?.id, olderAustin?.id, recentAustin?.id]),
        );
      },
      { timeout: 10_000, interval: 100 },
    );
    // One business only: nothing left to send in it.
    const again = await call(recoverPath(endpoint.id), {
      key: token,
      method: "POST",
      body: { since, business: austin.business.id },
    });
    expect(await json(again)).toEqual({ queued: 0 });
  });
});

describe("the budgets of an app endpoint", () => {
  it(`take ${SENDS_PER_HOUR} redeliveries and ${RECOVERS_PER_HOUR} recovers an hour for all its businesses together`, async () => {
    const { lisbon, austin, token, endpoint } = await appOfTwoShards();
    await eventOf(lisbon);
    await eventOf(austin);
    const ids = (await stored([endpoint.id])).map((row) => row.id);
    const other = await subscribeApp(token, receiverBox().url("/other"));
    await awayFromWindowEdge(10_000, HOUR);
    const answers = await Promise.all(
      Array.from({ length: SENDS_PER_HOUR + 4 }, (_, n) =>
        call(redeliverPath(endpoint.id, ids[n % 2] ?? 0), { key: token, method: "POST" }),
      ),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 202)).toHaveLength(SENDS_PER_HOUR);
    const refused = answers.find((answer) => answer.status === 429) as Response;
    expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
    await expectError(refused, 429, /at most 60 redeliveries/, { code: "rate_limited" });

    const since = iso(Date.now() - HOUR);
    const recovers = [];
    for (let n = 0; n <= RECOVERS_PER_HOUR; n++) {
      const business = n % 2 === 0 ? lisbon.business.id : undefined;
      recovers.push(
        (await call(recoverPath(endpoint.id), { key: token, method: "POST", body: { since, business } })).status,
      );
    }
    expect(recovers).toEqual([...Array(RECOVERS_PER_HOUR).fill(202), 429]);
    // The app's other endpoint has budgets of its own.
    await expect(await call(recoverPath(other.id), { key: token, method: "POST", body: { since } })).toHaveStatus(202);
  });
});

describe("GET /app/events", () => {
  it("lists each event sent to the app's endpoints once, newest first, paged across eu1 and us1", async () => {
    const { lisbon, austin, token, endpoint } = await appOfTwoShards();
    const leads = await subscribeApp(token, receiverBox().url("/leads"), ["lead.created"]);
    const own = await subscribe(lisbon.apiKey, receiverBox().url("/own"));
    const written = [
      await eventOf(lisbon),
      await eventOf(austin),
      await eventOf(lisbon, "review.created"),
      await eventOf(austin),
      await eventOf(lisbon),
    ];
    // A test event of the business's own endpoint is not the app's.
    const test = await call(`/api/v1/webhooks/${own.id}/test`, { key: lisbon.apiKey, method: "POST", body: {} });
    const { event_id: ownEvent } = await json<{ event_id: string }>(test);
    // Newest first by the lowest id of each event's deliveries to the app.
    const positions = new Map<string, number>();
    for (const row of await stored([endpoint.id, leads.id])) positions.set(row.eventId, row.id);
    const newestFirst = [...positions.entries()].sort(([, a], [, b]) => b - a).map(([id]) => id);
    expect([...newestFirst].sort()).toEqual([...written].sort());

    const pages = await allPages<Envelope>(
      token,
      (after) => `/api/v1/app/events?limit=2${after ? `&starting_after=${after}` : ""}`,
    );
    expect(pages.map((page) => page.has_more)).toEqual([true, true, false]);
    const listed = pages.flatMap((page) => page.data);
    expect(listed.map((envelope) => envelope.id)).toEqual(newestFirst);
    expect(listed.find((envelope) => envelope.id === written[1])).toMatchObject({
      event: "lead.created",
      business: { id: austin.business.id },
    });

    const ids = async (query: string) =>
      (await json<{ data: Envelope[] }>(await call(`/api/v1/app/events${query}`, { key: token }))).data.map(
        (envelope) => envelope.id,
      );
    expect(await ids("?type=review.created")).toEqual([written[2]]);
    expect(await ids(`?business=${austin.business.id}`)).toEqual([written[3], written[1]]);
    expect(await ids(`?business=${austin.business.id}&starting_after=${written[3]}`)).toEqual([written[1]]);
    await expectError(
      await call(`/api/v1/app/events?starting_after=${ownEvent}`, { key: token }),
      400,
      /starting_after/,
    );
    // An app without endpoints of its own was sent nothing.
    const quiet = await appTokenOf(await registerClient());
    expect(await json(await call("/api/v1/app/events", { key: quiet }))).toEqual({ data: [], has_more: false });
  });
});

describe("the app's history, read and written", () => {
  it("reads each shard once, at the same time, along the indexes of an app endpoint's deliveries", async () => {
    const { austin, token, endpoint } = await appOfTwoShards();
    const eventId = await eventOf(austin);
    const [delivery] = await stored([endpoint.id]);
    const counted = async (path: string, options: { method?: string; body?: unknown } = {}) => {
      const { bindings, trips } = countingShards(env);
      await expect(await call(path, { ...options, key: token, bindings })).toHaveStatus(
        options.method === "POST" ? 202 : 200,
      );
      return trips.length;
    };
    // The token, the endpoint (or the app's endpoints), then one batch per shard (4 shards).
    expect(await counted(deliveriesPath(endpoint.id))).toBe(6);
    // With a business: the token, the endpoint and the directory, then the business's shard.
    expect(await counted(deliveriesPath(endpoint.id, `?business=${austin.business.id}`))).toBe(4);
    expect(await counted("/api/v1/app/events")).toBe(6);
    // The cursor's position is looked for in every shard at the same time as the app's endpoints.
    expect(await counted(`/api/v1/app/events?starting_after=${eventId}`)).toBe(10);
    // The delivery looked for in every shard, then its write in its own.
    expect(await counted(redeliverPath(endpoint.id, delivery?.id ?? 0), { method: "POST" })).toBe(7);
    expect(await counted(recoverPath(endpoint.id), { method: "POST", body: { since: iso(Date.now() - HOUR) } })).toBe(
      6,
    );
  });

  it("runs no statement that walks a table: each reads along a key or an index", async () => {
    const { lisbon, austin, token, endpoint } = await appOfTwoShards();
    const eventId = await eventOf(austin);
    const [delivery] = await stored([endpoint.id]);
    const { bindings, seen } = recordingDatabases(env);
    const since = { since: iso(Date.now() - HOUR) };
    const requests: Array<[string, { method?: string; body?: unknown }]> = [
      [deliveriesPath(endpoint.id, "?status=pending&starting_after=999999999999999"), {}],
      [deliveriesPath(endpoint.id, `?business=${austin.business.id}`), {}],
      [`/api/v1/app/events?type=lead.created&starting_after=${eventId}`, {}],
      [`/api/v1/app/events?business=${lisbon.business.id}`, {}],
      [redeliverPath(endpoint.id, delivery?.id ?? 0), { method: "POST" }],
      [recoverPath(endpoint.id), { method: "POST", body: since }],
      [recoverPath(endpoint.id), { method: "POST", body: { ...since, business: lisbon.business.id } }],
    ];
    for (const [path, options] of requests) await call(path, { ...options, key: token, bindings });
    const statements = new Set(Object.values(seen).flat());
    expect(statements.size).toBeGreaterThan(10);
    for (const sql of statements) {
      const plan = await queryPlan(env.DB, sql, Array(sql.split("?").length - 1).fill(null));
      // The endpoints' JSON list is the one thing walked: at most 20 ids.
      expect(
        plan.filter((step) => /^SCAN (?!app_endpoint )/.test(step)),
        sql,
      ).toEqual([]);
    }
  });

  it("fills in the app endpoint of the deliveries written before its column, by the migration", async () => {
    const { lisbon, endpoint } = await appOfTwoShards();
    await subscribe(lisbon.apiKey, receiverBox().url("/own"));
    await eventOf(lisbon);
    const db = shardDb("eu1");
    const ofLisbon = eq(webhookDeliveries.businessId, lisbon.business.id);
    await db.update(webhookDeliveries).set({ appEndpointId: null }).where(ofLisbon);
    const migration = env.TEST_MIGRATIONS.find((each) => each.name === "0027_app_deliveries.sql");
    const backfill = migration?.queries.find((query) => query.includes("UPDATE `webhook_deliveries`"));
    await env.SHARD_EU1.prepare(backfill ?? "").run();
    const rows = await db.select().from(webhookDeliveries).where(ofLisbon);
    expect(rows.map((row) => row.appEndpointId).sort()).toEqual([endpoint.id, null].sort());
  });
});

describe("an app's history at the limits", () => {
  // The app's 20 endpoints each receive every event of a business in eu1 and one in us1: 60 events each, 2,400
  // deliveries. Pages of 100 (the most a list answers) run across both shards without a gap or a repeat, and each
  // event is listed once although 20 deliveries reached the app.
  it("pages 120 deliveries of one endpoint and 120 events sent to 20 endpoints by 100, across eu1 and us1", async () => {
    const { lisbon, austin, token, endpoint } = await appOfTwoShards();
    const others = [];
    for (let i = 1; i < MAX_APP_ENDPOINTS; i++) others.push(await subscribeApp(token, receiverBox().url(`/e${i}`)));
    await expectError(
      await call("/api/v1/app/webhooks", { key: token, method: "POST", body: { url: receiverBox().url("/21st") } }),
      403,
      /at most 20 webhook endpoints/,
    );
    const written: string[] = [];
    for (const shop of [lisbon, austin]) {
      const drafts = Array.from({ length: 60 }, (_, i) => ({ event: "lead.created" as const, data: { n: i } }));
      const { emitted } = await outboxOnly(shop.business, drafts, shop.shard);
      written.push(...emitted.map((event) => event.id));
    }
    const all = await stored([endpoint.id, ...others.map((other) => other.id)]);
    expect(all).toHaveLength(2 * 60 * MAX_APP_ENDPOINTS);

    const deliveries = await allPages<AppDelivery>(token, (after) =>
      deliveriesPath(endpoint.id, `?limit=100${after ? `&starting_after=${after}` : ""}`),
    );
    expect(deliveries.map((page) => [page.data.length, page.has_more])).toEqual([
      [100, true],
      [20, false],
    ]);
    const ofEndpoint = all.filter((row) => row.appEndpointId === endpoint.id);
    expect(deliveries.flatMap((page) => page.data.map((delivery) => delivery.id))).toEqual(
      ofEndpoint.map((row) => row.id),
    );
    expect(new Set(deliveries.flatMap((page) => page.data.map((delivery) => delivery.business_id)))).toEqual(
      new Set([lisbon.business.id, austin.business.id]),
    );

    const events = await allPages<Envelope>(
      token,
      (after) => `/api/v1/app/events?limit=100${after ? `&starting_after=${after}` : ""}`,
    );
    expect(events.map((page) => [page.data.length, page.has_more])).toEqual([
      [100, true],
      [20, false],
    ]);
    const listed = events.flatMap((page) => page.data.map((envelope) => envelope.id));
    expect(new Set(listed).size).toBe(120);
    expect([...listed].sort()).toEqual([...written].sort());
    // Newest first: each business's events in the reverse of the order they were written.
    for (const ofShop of [written.slice(0, 60), written.slice(60)]) {
      expect(listed.filter((id) => ofShop.includes(id))).toEqual([...ofShop].reverse());
    }
  });
});
