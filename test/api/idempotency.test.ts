import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ABANDONED_AFTER_MS, claimKey, fingerprintOf, KEPT_MS, WAIT_MS } from "../../src/admission/idempotency";
import { actions, idempotencyKeys, webhookEndpoints } from "../../src/db/schema";
import { shardBinding } from "../../src/db/shard-bindings";
import { SHARDS, type ShardName } from "../../src/db/shards";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import worker from "../../src/index";
import { iso } from "../../src/lib/time";
import { countingD1 } from "../helpers/counting-d1";
import { deps, testDependencies } from "../helpers/dependencies";
import { createApiKey, createBusiness, db, shardD1, shardDb } from "../helpers/fixtures";
import { BASE, call, expectError, json } from "../helpers/http";
import { createIntake, intakeBody } from "../helpers/intakes";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { businessFor, isSandboxRoute, MCP_SERVER_URL, REUSED_ROUND_TRIPS } from "../helpers/partner-routes";
import { expectServerErrors } from "../helpers/server-errors";
import { subscribe } from "../helpers/webhooks";

// docs/idempotency.md, The contract.
const HOOK = { url: "https://partner.example/hooks", events: ["booking.created"] };
const ACTION = {
  name: "check_stock",
  title: "Check stock",
  description: "Tells whether a product is in stock today, for customers asking about availability.",
  url: "https://partner.example/stock",
  parameters: { type: "object", properties: { sku: { type: "string", description: "Product code" } } },
};

let counter = 0;
const newKey = () => `key-${Date.now()}-${counter++}`;

const post = (key: string, path: string, body: unknown, idempotencyKey?: string) =>
  call(`/api/v1${path}`, {
    key,
    method: "POST",
    body,
    headers: idempotencyKey === undefined ? {} : { "Idempotency-Key": idempotencyKey },
  });

const endpointsOf = (businessId: string) => db.$count(webhookEndpoints, eq(webhookEndpoints.businessId, businessId));

/** The key's record, as the first request left it. */
const recordOf = (businessId: string, key: string) =>
  db
    .select()
    .from(idempotencyKeys)
    .where(and(eq(idempotencyKeys.businessId, businessId), eq(idempotencyKeys.key, key)))
    .get();

describe("a key sent again", async () => {
  const { business, apiKey } = await createBusiness();

  it("answers the first answer again, marked as replayed, and creates nothing more", async () => {
    const key = newKey();
    const first = await post(apiKey, "/webhooks", HOOK, key);
    await expect(first).toHaveStatus(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    const body = await first.text();
    const again = await post(apiKey, "/webhooks", HOOK, key);
    await expect(again).toHaveStatus(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.headers.get("Content-Type")).toBe(first.headers.get("Content-Type"));
    // The request's own headers are its own: a request id is never replayed.
    expect(again.headers.get("X-Request-Id")).toMatch(/\S/);
    expect(again.headers.get("X-Request-Id")).not.toBe(first.headers.get("X-Request-Id"));
    expect(await again.text()).toBe(body);
    expect(await endpointsOf(business.id)).toBe(1);
  });

  it("with another body or path is a 422, and changes nothing", async () => {
    const key = newKey();
    await expect(await post(apiKey, "/webhooks", HOOK, key)).toHaveStatus(201);
    const before = await endpointsOf(business.id);
    const sentence = /Idempotency-Key was already used with another request/;
    await expectError(
      await post(apiKey, "/webhooks", { ...HOOK, url: "https://partner.example/other" }, key),
      422,
      sentence,
    );
    await expectError(await post(apiKey, "/actions", ACTION, key), 422, sentence);
    expect(await endpointsOf(business.id)).toBe(before);
  });

  it("keeps a completed 4xx too: the same refused request is refused the same way, replayed", async () => {
    const key = newKey();
    const bad = { url: "not a url" };
    const first = await post(apiKey, "/webhooks", bad, key);
    await expect(first).toHaveStatus(400);
    const again = await post(apiKey, "/webhooks", bad, key);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect({ status: again.status, body: await again.text() }).toEqual({ status: 400, body: await first.text() });
  });

  it("runs as before without the header", async () => {
    const before = await endpointsOf(business.id);
    await expect(await post(apiKey, "/webhooks", HOOK)).toHaveStatus(201);
    await expect(await post(apiKey, "/webhooks", HOOK)).toHaveStatus(201);
    expect(await endpointsOf(business.id)).toBe(before + 2);
  });
});

describe("five concurrent requests with one key", () => {
  it("create one endpoint, and all five answer its id and secret", async () => {
    const { business, apiKey } = await createBusiness();
    const key = newKey();
    const answers = await Promise.all(Array.from({ length: 5 }, () => post(apiKey, "/webhooks", HOOK, key)));
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
    const bodies = await Promise.all(answers.map((answer) => json<{ id: number; secret: string }>(answer)));
    expect(new Set(bodies.map(({ id, secret }) => `${id} ${secret}`)).size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get("Idempotent-Replayed") === "true")).toHaveLength(4);
    expect(await endpointsOf(business.id)).toBe(1);
  });
});

describe("keys are not shared between principals (docs/idempotency.md)", () => {
  it("another API key of the business, and an app, run the same key on their own", async () => {
    const { business, apiKey } = await createBusiness();
    const second = await createApiKey(business.id);
    const key = newKey();
    const answers = [await post(apiKey, "/webhooks", HOOK, key), await post(second.apiKey, "/webhooks", HOOK, key)];
    expect(answers.map((answer) => [answer.status, answer.headers.get("Idempotent-Replayed")])).toEqual([
      [201, null],
      [201, null],
    ]);
    expect(await endpointsOf(business.id)).toBe(2);

    const owner = await createOwnerBusiness();
    const app = await connectApp(owner);
    const { apiKey: ownerKey } = await createApiKey(owner.business.id);
    const viaKey = await post(ownerKey, "/webhooks", HOOK, key);
    const viaApp = await post(app.tokens.access_token, "/webhooks", HOOK, key);
    expect([viaKey.status, viaApp.status]).toEqual([201, 201]);
    expect(viaApp.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await endpointsOf(owner.business.id)).toBe(2);
  });
});

describe("the header's form", async () => {
  const { apiKey } = await createBusiness();
  const sentence = "The header Idempotency-Key must be 1 to 255 printable ASCII characters.";

  it("takes 255 printable ASCII characters, and refuses 256, none, or a control character", async () => {
    await expect(await post(apiKey, "/webhooks", HOOK, `${newKey()}-`.padEnd(255, "~"))).toHaveStatus(201);
    await expectError(await post(apiKey, "/webhooks", HOOK, "k".repeat(256)), 400, sentence);
    await expectError(await post(apiKey, "/webhooks", HOOK, ""), 400, sentence);
    await expectError(await post(apiKey, "/webhooks", HOOK, "tab\there"), 400, sentence);
  });

  it("is judged after the credential: without one the answer is 401", async () => {
    await expect(await post("", "/webhooks", HOOK, "k".repeat(256))).toHaveStatus(401);
  });
});

/** A record left by a first request of `apiKeyId` still running `POST /webhooks` with HOOK, `at` that instant. */
async function leftRunning(businessId: string, apiKeyId: number, key: string, at = Date.now()) {
  await db.insert(idempotencyKeys).values({
    businessId,
    principal: `key:${apiKeyId}`,
    key,
    fingerprint: await fingerprintOf("POST", "/api/v1/webhooks", JSON.stringify(HOOK)),
    createdAt: iso(at),
  });
}

describe("a first request still running", async () => {
  const { business } = await createBusiness();
  const { apiKey, apiKeyId } = await createApiKey(business.id);

  it("is waited for, then its answer replayed once it completes", async () => {
    const key = newKey();
    await leftRunning(business.id, apiKeyId, key);
    const waiting = post(apiKey, "/webhooks", HOOK, key);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const answer = { status: 201, headers: { "Content-Type": "application/json" }, body: '{"id":1}' };
    await db.update(idempotencyKeys).set(answer).where(eq(idempotencyKeys.key, key));
    const replayed = await waiting;
    expect([replayed.status, replayed.headers.get("Idempotent-Replayed"), await replayed.text()]).toEqual([
      201,
      "true",
      '{"id":1}',
    ]);
  });

  it(`is a 409 once still running after ${WAIT_MS} ms of the clock, polled all along, and nothing is created`, async () => {
    const key = newKey();
    const started = Date.now();
    await leftRunning(business.id, apiKeyId, key, started);
    const before = await endpointsOf(business.id);
    // The clock moves only when the wait pauses: no test time passes, and the polls are counted.
    let now = started;
    const pauses: number[] = [];
    const waiting = {
      clock: () => now,
      pause: async (ms: number) => {
        now += ms;
        pauses.push(now);
      },
    };
    const claim = {
      businessId: business.id,
      principal: `key:${apiKeyId}`,
      key,
      fingerprint: await fingerprintOf("POST", "/api/v1/webhooks", JSON.stringify(HOOK)),
    };
    await expect(claimKey(deps, claim, waiting)).rejects.toMatchObject({
      status: 409,
      message: expect.stringMatching(/Idempotency-Key is still running/),
    });
    expect(now - started).toBeLessThanOrEqual(WAIT_MS);
    expect(now - started).toBeGreaterThan(WAIT_MS - 100);
    expect(pauses.length).toBeGreaterThan(100);
    expect(await endpointsOf(business.id)).toBe(before);
  });
});

describe("24 hours later", () => {
  it("the key runs anew: an older record counts as absent and is replaced", async () => {
    const { business } = await createBusiness();
    const { apiKey, apiKeyId } = await createApiKey(business.id);
    const key = newKey();
    await leftRunning(business.id, apiKeyId, key, Date.now() - KEPT_MS - 1_000);
    await db.update(idempotencyKeys).set({ status: 201, headers: {}, body: "{}" }).where(eq(idempotencyKeys.key, key));
    const answer = await post(apiKey, "/webhooks", HOOK, key);
    expect([answer.status, answer.headers.get("Idempotent-Replayed")]).toEqual([201, null]);
    expect(await endpointsOf(business.id)).toBe(1);
    const record = await recordOf(business.id, key);
    expect(record?.body).toBe(JSON.stringify(await json(answer)));
    expect(Date.parse(record?.createdAt ?? "")).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe("a request that died before completing", () => {
  it(`leaves no key running for longer than ${ABANDONED_AFTER_MS / 60_000} minutes: the next request claims it`, async () => {
    const { business } = await createBusiness();
    const { apiKey, apiKeyId } = await createApiKey(business.id);
    const key = newKey();
    await leftRunning(business.id, apiKeyId, key, Date.now() - ABANDONED_AFTER_MS - 1_000);
    const answer = await post(apiKey, "/webhooks", HOOK, key);
    expect([answer.status, answer.headers.get("Idempotent-Replayed")]).toEqual([201, null]);
    expect(await endpointsOf(business.id)).toBe(1);
    expect((await recordOf(business.id, key))?.status).toBe(201);
  });
});

describe("a failure on our side", () => {
  it("is not kept: the key is released and a retry runs", async () => {
    const { business, apiKey } = await createBusiness();
    const key = newKey();
    const trigger = `fail_idempotent_insert_${business.id.replaceAll("-", "_")}`;
    expectServerErrors();
    await shardD1.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON webhook_endpoints WHEN NEW.business_id = '${business.id}' BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
    try {
      await expect(await post(apiKey, "/webhooks", HOOK, key)).toHaveStatus(500);
      expect(await recordOf(business.id, key)).toBeUndefined();
    } finally {
      await shardD1.exec(`DROP TRIGGER ${trigger}`);
    }
    const retry = await post(apiKey, "/webhooks", HOOK, key);
    expect([retry.status, retry.headers.get("Idempotent-Replayed")]).toEqual([201, null]);
    expect(await endpointsOf(business.id)).toBe(1);
  });
});

/**
 * A send on demand enqueues its deliveries after its answer (`waitUntil`, src/routes/webhooks/deliveries.ts): that
 * work's round trip can land while the answer is being kept, and is then counted with the request's.
 */
const ENQUEUES_AFTER = new Set([
  "/webhooks/{id}/deliveries/{delivery_id}/redeliver",
  "/webhooks/{id}/test",
  // An event caused on a sandbox business is delivered to the endpoint the same way.
  "/sandbox/events",
]);

/** The body of a valid call of each POST, by its path in the OpenAPI document. */
const POSTS: Record<string, unknown> = {
  "/webhooks": HOOK,
  "/webhooks/{id}/enable": undefined,
  "/webhooks/{id}/rotate-secret": { expires_in: 60 },
  "/webhooks/{id}/deliveries/{delivery_id}/redeliver": undefined,
  "/webhooks/{id}/recover": { since: new Date(Date.now() - 3_600_000).toISOString() },
  "/webhooks/{id}/test": { event: "booking.created" },
  "/intakes": intakeBody(),
  "/actions": { ...ACTION, name: "check_price" },
  "/actions/{id}/rotate-secret": { expires_in: 60 },
  "/listen-sessions": { events: ["booking.created"] },
  "/mcp-servers": { url: MCP_SERVER_URL },
  "/mcp-servers/{id}/refresh": undefined,
  // With a sandbox business's test key, on its action and an intake switched on as its owner does.
  "/sandbox/events": { event: "order.created" },
  "/sandbox/intakes/{id}/conversations": { answers: { full_name: "Noor", email: "noor@example.com" } },
  "/sandbox/actions/{id}/calls": { arguments: { sku: "LOAF-2" } },
};

/** The D1 round trips of a request made before its answer. */
async function tripsOf(path: string, apiKey: string, body: unknown, key: string, shard: ShardName) {
  const { d1, trips } = countingD1(shardBinding(env, shard));
  const headers: Record<string, string> = { Authorization: `Bearer ${apiKey}`, "Idempotency-Key": key };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const request = new Request(`${BASE}${path}`, {
    method: "POST",
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const ctx = createExecutionContext();
  const response = await worker.fetch(request, { ...env, [SHARDS[shard].binding]: d1 }, ctx);
  const count = trips.length;
  await waitOnExecutionContext(ctx);
  return { status: response.status, replayed: response.headers.get("Idempotent-Replayed"), count };
}

describe("every POST route", async () => {
  const document = await json<{ paths: Record<string, Record<string, unknown>> }>(await call("/api/v1/openapi.json"));
  // Sandbox creation is outside /api/v1 (its own server in the document) and takes no credential, so no key either.
  const { "/sandbox/businesses": _creation, ...paths } = document.paths;
  // An app's own routes (/app/…) name no business, whose database keeps the keys: they take none yet
  // (docs/idempotency.md).
  const posts = Object.entries(paths)
    .filter(([path, methods]) => "post" in methods && !path.startsWith("/app/"))
    .map(([path]) => path);

  it("has a row here", () => {
    expect(posts.sort()).toEqual(Object.keys(POSTS).sort());
  });

  it.each(Object.entries(POSTS))(
    "%s takes the key: claimed and kept (two round trips more), replayed for two",
    async (path, body) => {
      const { business, apiKey, shard } = await businessFor(path);
      const ownerDeps = testDependencies(shard);
      const endpoint = await subscribe(apiKey, "https://partner.example/hooks");
      const action = await json<{ id: number }>(await post(apiKey, "/actions", ACTION));
      await post(apiKey, `/webhooks/${endpoint.id}/test`, {});
      const deliveries = await call(`/api/v1/webhooks/${endpoint.id}/deliveries`, { key: apiKey });
      const delivery = (await json<{ data: Array<{ id: number }> }>(deliveries)).data[0]?.id;
      if (isSandboxRoute(path)) await switchAction(ownerDeps, business.id, action.id, true);
      const intake = path.startsWith("/sandbox/intakes") ? (await createIntake(apiKey)).id : undefined;
      if (intake !== undefined) await switchIntakeOn(ownerDeps, business.id, intake);
      const server = path.startsWith("/mcp-servers/")
        ? (await json<{ id: number }>(await post(apiKey, "/mcp-servers", { url: MCP_SERVER_URL }))).id
        : undefined;
      const id = /^\/(sandbox\/)?actions/.test(path) ? action.id : (server ?? intake ?? endpoint.id);
      const url = `/api/v1${path.replace("{id}", String(id)).replace("{delivery_id}", String(delivery))}`;
      // The first request of an hour also records the credential's use (waitUntil): measured is every other one.
      await call("/api/v1/me", { key: apiKey });
      const key = newKey();
      const first = await tripsOf(url, apiKey, body, key, shard);
      expect(first.status).toBeLessThan(300);
      expect(first.replayed).toBeNull();
      // The route's own (at most two, test/api/round-trips-every-route.test.ts), the claim and the kept answer.
      const own = REUSED_ROUND_TRIPS[`POST ${path}`] ?? 2;
      expect(first.count).toBeLessThanOrEqual(own + (ENQUEUES_AFTER.has(path) ? 3 : 2));
      const again = await tripsOf(url, apiKey, body, key, shard);
      expect(again).toEqual({ status: first.status, replayed: "true", count: 2 });
      expect(await shardDb(shard).$count(actions, eq(actions.businessId, business.id))).toBe(
        path === "/actions" ? 2 : 1,
      );
    },
  );
});
