import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { actions, webhookEndpoints } from "../../src/db/schema";
import { API_KEY_PREFIX } from "../../src/domain/access/principals";
import worker from "../../src/index";
import { randomToken } from "../../src/lib/secrets";
import { NOT_JSON_BODY } from "../../src/middleware/error-responses";
import { registerAction } from "../helpers/actions";
import { countingD1 } from "../helpers/counting-d1";
import { createApiKey, createBusiness, db, SHARD_D1_BINDING, shardD1 } from "../helpers/fixtures";
import { BASE, call, expectError, expectMissingCredential, json } from "../helpers/http";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";

// docs/webhooks.md, Rotating a secret. `POST /webhooks/{id}/rotate-secret` and `POST /actions/{id}/rotate-secret`,
// body `{ "expires_in": 0..86400 }` (86,400 when left out), answer 200 `{ "secret" }` shown once. What the receiver
// then gets (two signatures until the previous secret expires) is proved in test/webhooks/standard-webhooks.test.ts.

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const DAY_MS = 86_400_000;
const EXPIRES_IN_RULE = 'The field "expires_in" must be a whole number of seconds from 0 to 86400.';

let actionCount = 0;

/** The two resources with a signing secret: how one is created, its stored row, and its 404. */
const RESOURCES = {
  webhooks: {
    create: async (credential: string) => {
      const response = await call("/api/v1/webhooks", {
        key: credential,
        method: "POST",
        body: { url: "https://partner.example/hooks" },
      });
      await expect(response).toHaveStatus(201);
      return json<{ id: number; secret: string }>(response);
    },
    row: (id: number) => db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get(),
    notFound: "No webhook endpoint with that id exists for this business.",
  },
  actions: {
    create: (credential: string) => registerAction(credential, `rotating_${++actionCount}`),
    row: (id: number) => db.select().from(actions).where(eq(actions.id, id)).get(),
    notFound: "No action with that id exists for this business.",
  },
} as const;

type Resource = keyof typeof RESOURCES;
const EACH: Resource[] = ["webhooks", "actions"];

const rotate = (
  resource: Resource,
  id: number | string,
  options: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
) => call(`/api/v1/${resource}/${id}/rotate-secret`, { method: "POST", ...options });

/** A business of its own, with one record of `resource` created with its API key. */
async function recordOf(resource: Resource) {
  const { business, apiKey } = await createBusiness();
  const created = await RESOURCES[resource].create(apiKey);
  return { business, apiKey, created, row: () => RESOURCES[resource].row(created.id) };
}

describe.each(EACH)("POST /api/v1/%s/{id}/rotate-secret", (resource) => {
  it("answers 200 with exactly { secret }: a new one; the old one is previous for 86,400 s when the body is left out", async () => {
    const { apiKey, created, row } = await recordOf(resource);
    const before = await row();
    const sentAt = Date.now();
    const response = await rotate(resource, created.id, { key: apiKey });
    const answeredAt = Date.now();
    await expect(response).toHaveStatus(200);
    const body = await json<{ secret: string }>(response);
    expect(Object.keys(body)).toEqual(["secret"]);
    expect(body.secret).toMatch(SECRET);
    expect(body.secret).not.toBe(created.secret);

    const after = await row();
    // Only the three secret columns change (an action's updatedAt too stays: no field of the record changed).
    expect(after).toEqual({
      ...before,
      secret: body.secret,
      previousSecret: created.secret,
      previousSecretExpiresAt: expect.any(String),
    });
    const expiresAt = Date.parse(after?.previousSecretExpiresAt ?? "");
    expect(expiresAt).toBeGreaterThanOrEqual(sentAt + DAY_MS);
    expect(expiresAt).toBeLessThanOrEqual(answeredAt + DAY_MS);
  });

  it.each([
    ["{}, the default", {}, 86_400],
    ["0: the old secret stops at once", { expires_in: 0 }, 0],
    ["1", { expires_in: 1 }, 1],
    ["3600", { expires_in: 3600 }, 3600],
    ["86400, the most", { expires_in: 86_400 }, 86_400],
  ])(
    "takes expires_in %s: the previous secret expires that many seconds after the rotation",
    async (_case, body, seconds) => {
      const { apiKey, created, row } = await recordOf(resource);
      const sentAt = Date.now();
      const response = await rotate(resource, created.id, { key: apiKey, body });
      const answeredAt = Date.now();
      await expect(response).toHaveStatus(200);
      const stored = await row();
      expect(stored?.previousSecret).toBe(created.secret);
      const expiresAt = Date.parse(stored?.previousSecretExpiresAt ?? "");
      expect(expiresAt).toBeGreaterThanOrEqual(sentAt + seconds * 1000);
      expect(expiresAt).toBeLessThanOrEqual(answeredAt + seconds * 1000);
    },
  );

  it.each([
    ["a negative number", { expires_in: -1 }, EXPIRES_IN_RULE],
    ["more than a day", { expires_in: 86_401 }, EXPIRES_IN_RULE],
    ["a fraction", { expires_in: 1.5 }, EXPIRES_IN_RULE],
    ["a string", { expires_in: "60" }, EXPIRES_IN_RULE],
    ["null", { expires_in: null }, EXPIRES_IN_RULE],
    ["a boolean", { expires_in: true }, EXPIRES_IN_RULE],
    ["an array", { expires_in: [60] }, EXPIRES_IN_RULE],
    ["an array body", [], "The request body must be an object."],
    ["a body that is not JSON", "{expires_in: 0", "The request body is not valid JSON."],
  ])("refuses %s with a 400 saying why, and changes nothing", async (_case, body, sentence) => {
    const { apiKey, created, row } = await recordOf(resource);
    const before = await row();
    await expectError(await rotate(resource, created.id, { key: apiKey, body }), 400, sentence);
    expect(await row()).toEqual(before);
  });

  it("refuses a body of another content type, naming application/json", async () => {
    const { apiKey, created, row } = await recordOf(resource);
    const before = await row();
    const response = await rotate(resource, created.id, {
      key: apiKey,
      body: "expires_in=0",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    await expectError(response, 400, NOT_JSON_BODY);
    expect(await row()).toEqual(before);
  });

  it("answers 401 without a valid credential (before judging the body) and 403 on a lapsed plan, changing nothing", async () => {
    const { business, created, row } = await recordOf(resource);
    const before = await row();
    const revoked = await createApiKey(business.id, { revoked: true });
    await expectMissingCredential(await rotate(resource, created.id));
    await expectMissingCredential(await rotate(resource, created.id, { body: { expires_in: -1 } }));
    await expectError(
      await rotate(resource, created.id, { key: revoked.apiKey }),
      401,
      "The API key has been revoked.",
    );
    await expectError(
      await rotate(resource, created.id, { key: randomToken(API_KEY_PREFIX), body: { expires_in: "soon" } }),
      401,
      "The API key is not recognised.",
    );
    const lapsed = await createBusiness({ active: false });
    await expectError(await rotate(resource, created.id, { key: lapsed.apiKey }), 403, /lapsed/);
    expect(await row()).toEqual(before);
  });

  it("answers 404, as for a missing id, for another business's record, an unknown id and one that is not a number", async () => {
    const { created, row } = await recordOf(resource);
    const before = await row();
    const stranger = await createBusiness();
    const notFound = RESOURCES[resource].notFound;
    await expectError(await rotate(resource, created.id, { key: stranger.apiKey }), 404, notFound);
    await expectError(await rotate(resource, 999_999_999, { key: stranger.apiKey }), 404, notFound);
    await expectError(await rotate(resource, "abc", { key: stranger.apiKey }), 404, notFound);
    // A bad body is the same 400 for another business's record as for a missing one: it tells nothing of either.
    for (const id of [created.id, 999_999_999]) {
      await expectError(
        await rotate(resource, id, { key: stranger.apiKey, body: { expires_in: -1 } }),
        400,
        EXPIRES_IN_RULE,
      );
    }
    expect(await row()).toEqual(before);
  });

  it("answers 404 across owner sides of one business: an app's record to the API keys, and theirs to the app", async () => {
    const shop = await createOwnerBusiness();
    const app = (await connectApp(shop)).tokens.access_token;
    const otherApp = (await connectApp(shop)).tokens.access_token;
    const ofKeys = await RESOURCES[resource].create(shop.apiKey);
    const ofApp = await RESOURCES[resource].create(app);
    const rows = async () => [await RESOURCES[resource].row(ofKeys.id), await RESOURCES[resource].row(ofApp.id)];
    const before = await rows();
    const notFound = RESOURCES[resource].notFound;
    await expectError(await rotate(resource, ofApp.id, { key: shop.apiKey }), 404, notFound);
    await expectError(await rotate(resource, ofKeys.id, { key: app }), 404, notFound);
    await expectError(await rotate(resource, ofApp.id, { key: otherApp }), 404, notFound);
    // Another API key of the business shares the keys' side (docs/architecture.md, Principals and owner sides).
    const secondKey = await createApiKey(shop.business.id);
    await expectError(await rotate(resource, ofApp.id, { key: secondKey.apiKey }), 404, notFound);
    expect(await rows()).toEqual(before);

    const byApp = await rotate(resource, ofApp.id, { key: app });
    await expect(byApp).toHaveStatus(200);
    expect((await RESOURCES[resource].row(ofApp.id))?.secret).toBe((await json<{ secret: string }>(byApp)).secret);
    const bySecondKey = await rotate(resource, ofKeys.id, { key: secondKey.apiKey });
    await expect(bySecondKey).toHaveStatus(200);
  });

  it("shows the new secret once: no list or read of the record answers it, nor the previous one", async () => {
    const { apiKey, created } = await recordOf(resource);
    const { secret } = await json<{ secret: string }>(await rotate(resource, created.id, { key: apiKey }));
    const reads = [`/api/v1/${resource}`, ...(resource === "actions" ? [`/api/v1/actions/${created.id}`] : [])];
    for (const path of reads) {
      const response = await call(path, { key: apiKey });
      await expect(response).toHaveStatus(200);
      const text = await response.text();
      expect(text).toContain(`"id":${created.id}`);
      for (const shown of [secret, created.secret, "whsec_", "previous"]) expect(text).not.toContain(shown);
    }
    // A second rotation answers its own secret only.
    const again = await json<{ secret: string }>(await rotate(resource, created.id, { key: apiKey }));
    expect(Object.keys(again)).toEqual(["secret"]);
    expect(again.secret).not.toBe(secret);
  });

  it("of two rotations at once, exactly one answered secret is current and the other previous", async () => {
    const { apiKey, created, row } = await recordOf(resource);
    const responses = await Promise.all(
      [600, 1200].map((expires_in) => rotate(resource, created.id, { key: apiKey, body: { expires_in } })),
    );
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    const [first, second] = await Promise.all(responses.map((r) => json<{ secret: string }>(r)));
    const stored = await row();
    expect([stored?.secret, stored?.previousSecret].sort()).toEqual([first?.secret, second?.secret].sort());
  });

  it("of eight rotations at once, one answered secret is current, the one applied before it previous, the rest gone", async () => {
    const { apiKey, created, row } = await recordOf(resource);
    // Each request its own expires_in, so that the stored expiry tells which request wrote the row last.
    const seconds = [60, 120, 180, 240, 300, 360, 420, 480];
    const sentAt = Date.now();
    const responses = await Promise.all(
      seconds.map((expires_in) => rotate(resource, created.id, { key: apiKey, body: { expires_in } })),
    );
    const answeredAt = Date.now();
    expect(responses.map((response) => response.status)).toEqual(seconds.map(() => 200));
    const answered = await Promise.all(responses.map(async (r) => (await json<{ secret: string }>(r)).secret));
    expect(new Set(answered).size).toBe(seconds.length);

    const stored = await row();
    const current = answered.indexOf(stored?.secret ?? "");
    expect(current).toBeGreaterThanOrEqual(0);
    expect(answered).toContain(stored?.previousSecret);
    expect(stored?.previousSecret).not.toBe(stored?.secret);
    // The expiry is the one the request that made the current secret asked for: both written by one statement.
    const expiresAt = Date.parse(stored?.previousSecretExpiresAt ?? "");
    const asked = (seconds[current] ?? 0) * 1000;
    expect(expiresAt).toBeGreaterThanOrEqual(sentAt + asked);
    expect(expiresAt).toBeLessThanOrEqual(answeredAt + asked);
  });

  it("makes two D1 round trips with an API key and with an access token: the credential, then one UPDATE", async () => {
    const withKey = await createBusiness();
    const withToken = (await connectApp(await createOwnerBusiness())).tokens.access_token;
    for (const credential of [withKey.apiKey, withToken]) {
      const { id } = await RESOURCES[resource].create(credential);
      // The first request of an hour also records the credential's use, after its answer: measured is every other.
      await call("/api/v1/me", { key: credential });
      const { d1, trips } = countingD1(shardD1);
      const ctx = createExecutionContext();
      const request = new Request(`${BASE}/api/v1/${resource}/${id}/rotate-secret`, {
        method: "POST",
        headers: { Authorization: `Bearer ${credential}`, "Content-Type": "application/json" },
        body: JSON.stringify({ expires_in: 60 }),
      });
      const response = await worker.fetch(request, { ...env, [SHARD_D1_BINDING]: d1 }, ctx);
      const answeredTrips = [...trips];
      await waitOnExecutionContext(ctx);
      await expect(response).toHaveStatus(200);
      expect(answeredTrips).toHaveLength(2);
      expect(answeredTrips[1]).toMatch(/^update .* returning/i);
    }
  });
});

describe("the OpenAPI document", () => {
  it("describes both routes: the optional body with its bounds and default, the secret, and their errors", async () => {
    type Operation = {
      operationId?: string;
      security: unknown;
      requestBody: { required?: boolean; content: Record<string, { schema: { $ref: string } }> };
      responses: Record<string, unknown>;
    };
    const document = await json<{
      paths: Record<string, { post: Operation }>;
      components: { schemas: Record<string, unknown> };
    }>(await call("/api/v1/openapi.json"));
    for (const [path, operationId] of [
      ["/webhooks/{id}/rotate-secret", "rotateWebhookEndpointSecret"],
      ["/actions/{id}/rotate-secret", "rotateActionSecret"],
    ] as const) {
      const operation = document.paths[path]?.post;
      expect(operation?.operationId).toBe(operationId);
      expect(operation?.security).toEqual([{ bearerAuth: [] }]);
      expect(operation?.requestBody.required).toBe(false);
      expect(operation?.requestBody.content["application/json"]?.schema).toEqual({
        $ref: "#/components/schemas/RotateSecret",
      });
      // 409 and 422: the answers of Idempotency-Key, documented on every POST (docs/idempotency.md).
      expect(Object.keys(operation?.responses ?? {}).sort()).toEqual(["200", "400", "401", "403", "404", "409", "422"]);
    }
    expect(document.components.schemas.RotateSecret).toMatchObject({
      type: "object",
      properties: { expires_in: { type: "integer", minimum: 0, maximum: 86_400, default: 86_400 } },
    });
    expect(document.components.schemas.RotatedSecret).toMatchObject({
      type: "object",
      properties: { secret: { type: "string" } },
      required: ["secret"],
    });
  });
});
