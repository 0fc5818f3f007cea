import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhookEndpoints } from "../../src/db/schema";
import { EVENT_NAMES } from "../../src/names-and-limits";
import { createApiKey, createBusiness, db } from "../helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "../helpers/http";

type Endpoint = {
  id: number;
  url: string;
  events: string[];
  description: string;
  status: string;
  disabled_reason: string | null;
  last_success_at: string | null;
  created_at: string;
};
type Created = Endpoint & { secret: string };
type List = { data: Endpoint[]; events: string[] };

/** The members of an endpoint record, sorted (docs/webhooks.md, Reading and changing an endpoint; Endpoint health). */
const RECORD_MEMBERS = [
  "created_at",
  "description",
  "disabled_reason",
  "events",
  "id",
  "last_success_at",
  "status",
  "url",
];

// `whsec_` + 32 random bytes in standard base64, the form Standard Webhooks libraries decode (docs/webhooks.md, The
// signatures).
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const HOOK = "https://partner.example/hooks/secretary";

const post = (key: string | undefined, body: unknown) => call("/api/v1/webhooks", { key, method: "POST", body });
const list = (key: string | undefined) => call("/api/v1/webhooks", { key });
const remove = (key: string | undefined, id: number | string) =>
  call(`/api/v1/webhooks/${id}`, { key, method: "DELETE" });

describe("POST /api/v1/webhooks", async () => {
  const { business, apiKey } = await createBusiness();

  it("answers 201 with exactly the endpoint record (its health included) and its secret, shown once", async () => {
    const before = new Date().toISOString();
    const response = await post(apiKey, {
      url: HOOK,
      events: ["booking.created", "order.created"],
      description: "Bookings to the CRM",
    });
    await expect(response).toHaveStatus(201);
    const body = await json<Created>(response);
    expect(Object.keys(body).sort()).toEqual([...RECORD_MEMBERS, "secret"].sort());
    expect(body).toEqual({
      id: expect.any(Number),
      url: HOOK,
      events: ["booking.created", "order.created"],
      description: "Bookings to the CRM",
      status: "enabled",
      disabled_reason: null,
      last_success_at: null,
      created_at: expect.stringMatching(TIMESTAMP),
      secret: expect.stringMatching(SECRET),
    });
    expect(body.created_at >= before).toBe(true);

    const listed = await json<List>(await list(apiKey));
    const shown = listed.data.find((endpoint) => endpoint.id === body.id);
    expect(shown).toEqual({
      id: body.id,
      url: HOOK,
      events: ["booking.created", "order.created"],
      description: "Bookings to the CRM",
      status: "enabled",
      disabled_reason: null,
      last_success_at: null,
      created_at: body.created_at,
    });
    expect(JSON.stringify(listed)).not.toContain(body.secret);
    expect(JSON.stringify(listed)).not.toContain("whsec_");
  });

  it("gives every endpoint its own secret", async () => {
    const first = await json<Created>(await post(apiKey, { url: HOOK }));
    const second = await json<Created>(await post(apiKey, { url: HOOK }));
    expect(first.secret).toMatch(SECRET);
    expect(second.secret).toMatch(SECRET);
    expect(first.secret).not.toBe(second.secret);
    expect(first.id).not.toBe(second.id);
  });

  it('subscribes to ["*"] when events are omitted, with an empty description', async () => {
    const response = await post(apiKey, { url: HOOK });
    await expect(response).toHaveStatus(201);
    expect(await json(response)).toMatchObject({ events: ["*"], description: "" });
  });

  it('accepts ["*", "intake.completed"] (everything, plus the opt-in event)', async () => {
    const response = await post(apiKey, { url: HOOK, events: ["*", "intake.completed"] });
    await expect(response).toHaveStatus(201);
    expect((await json<Created>(response)).events).toEqual(["*", "intake.completed"]);
  });

  it("accepts every event name of the catalog", async () => {
    const response = await post(apiKey, { url: HOOK, events: [...EVENT_NAMES] });
    await expect(response).toHaveStatus(201);
    expect((await json<Created>(response)).events).toEqual([...EVENT_NAMES]);
  });

  it("folds duplicate event names, keeping the first occurrence's order", async () => {
    const response = await post(apiKey, {
      url: HOOK,
      events: ["order.created", "booking.created", "order.created", "booking.created"],
    });
    await expect(response).toHaveStatus(201);
    expect((await json<Created>(response)).events).toEqual(["order.created", "booking.created"]);
  });

  it("ignores keys the partner may not set (id, secret, business_id, created_at)", async () => {
    const other = await createBusiness();
    const response = await post(apiKey, {
      url: HOOK,
      id: 999_999,
      secret: "whsec_chosen-by-the-partner",
      business_id: other.business.id,
      created_at: "2000-01-01T00:00:00.000Z",
    });
    await expect(response).toHaveStatus(201);
    const body = await json<Created>(response);
    expect(body.id).not.toBe(999_999);
    expect(body.secret).not.toBe("whsec_chosen-by-the-partner");
    expect(body.secret).toMatch(SECRET);
    expect(body.created_at).not.toBe("2000-01-01T00:00:00.000Z");
    const row = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, body.id)).get();
    expect(row?.businessId).toBe(business.id);
  });

  it("stores the endpoint with its secret (it keys the HMAC) and the creating key as its source", async () => {
    const second = await createApiKey(business.id);
    const response = await post(second.apiKey, { url: HOOK, description: "made with the second key" });
    await expect(response).toHaveStatus(201);
    const body = await json<Created>(response);
    const row = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, body.id)).get();
    expect(row).toEqual({
      id: body.id,
      businessId: business.id,
      url: HOOK,
      events: ["*"],
      description: "made with the second key",
      secret: body.secret,
      previousSecret: null,
      previousSecretExpiresAt: null,
      status: "enabled",
      disabledReason: null,
      lastSuccessAt: null,
      apiKeyId: second.apiKeyId,
      oauthGrantId: null,
      appEndpointId: null,
      createdAt: body.created_at,
    });
  });

  it("keeps a description of exactly 500 characters and a url of exactly 2048", async () => {
    const url = `https://partner.example/${"a".repeat(2048 - "https://partner.example/".length)}`;
    expect(url).toHaveLength(2048);
    const response = await post(apiKey, { url, description: "d".repeat(500) });
    await expect(response).toHaveStatus(201);
    expect(await json(response)).toMatchObject({ url, description: "d".repeat(500) });
  });

  describe("refuses an invalid events list with 400", () => {
    it.each([
      [
        "booking.updated",
        'The field "events[0]" is "booking.updated", which is not an event name (GET /webhooks lists them).',
      ],
      [
        "BOOKING.CREATED",
        'The field "events[0]" is "BOOKING.CREATED", which is not an event name (GET /webhooks lists them).',
      ],
      ["booking.*", 'The field "events[0]" is "booking.*", which is not an event name (GET /webhooks lists them).'],
      ["", 'The field "events[0]" is "", which is not an event name (GET /webhooks lists them).'],
    ])("an unknown event name %j, named in the sentence", async (name, sentence) => {
      await expectError(await post(apiKey, { url: HOOK, events: [name] }), 400, sentence);
    });

    it("names the unknown event where it stands in the list", async () => {
      const response = await post(apiKey, { url: HOOK, events: ["booking.created", "booking.updated"] });
      await expectError(response, 400, /"events\[1\]".*"booking\.updated"/);
    });

    it("an empty list", async () => {
      await expectError(
        await post(apiKey, { url: HOOK, events: [] }),
        400,
        'The field "events" must have at least 1 item.',
      );
    });

    it.each([
      ["a string", "booking.created"],
      ["an object", { "booking.created": true }],
      ["null", null],
      ["a number", 1],
    ])("events as %s", async (_case, events) => {
      await expectError(await post(apiKey, { url: HOOK, events }), 400, /^The field "events" must be an array\.$/);
    });

    it("a name that is not a string", async () => {
      await expectError(await post(apiKey, { url: HOOK, events: [42] }), 400, /^The field "events\[0\]" must be/);
    });
  });

  describe("refuses an invalid url with 400 naming it", () => {
    it("a missing url", async () => {
      await expectError(await post(apiKey, { events: ["*"] }), 400, 'The field "url" is required.');
    });

    it.each([
      ["a number", 42],
      ["null", null],
      ["an object", { href: HOOK }],
    ])("a url that is not a string (%s)", async (_case, url) => {
      await expectError(await post(apiKey, { url }), 400, 'The field "url" must be a string.');
    });

    it("a url over 2048 characters", async () => {
      const url = `https://partner.example/${"a".repeat(2049 - "https://partner.example/".length)}`;
      expect(url).toHaveLength(2049);
      await expectError(await post(apiKey, { url }), 400, 'The field "url" must be at most 2048 characters long.');
    });

    it.each([
      ["a relative path", "/hooks/secretary", "must be an absolute URL"],
      ["a host without a scheme", "partner.example/hooks", "must be an absolute URL"],
      ["an empty string", "", "must be an absolute URL"],
      ["http to a public host", "http://partner.example/hooks", "must use https"],
      ["ftp", "ftp://partner.example/hooks", "must use https"],
      ["ftp to loopback", "ftp://127.0.0.1/hooks", "must use https"],
      ["a user name and password", "https://user:pass@partner.example/hooks", "must not carry a user name or password"],
      ["a user name alone", "https://user@partner.example/hooks", "must not carry a user name or password"],
      ["credentials on loopback", "http://user:pass@127.0.0.1:9999/x", "must not carry a user name or password"],
      ["10.0.0.1", "https://10.0.0.1/hooks", "must be a public address, not a private, loopback or reserved one"],
      ["192.168.1.1", "https://192.168.1.1/hooks", "must be a public address, not a private, loopback or reserved one"],
      [
        "the metadata address",
        "https://169.254.169.254/latest",
        "must be a public address, not a private, loopback or reserved one",
      ],
      ["172.16.0.1", "https://172.16.0.1/", "must be a public address, not a private, loopback or reserved one"],
      [
        "100.64.0.1 (CGNAT)",
        "https://100.64.0.1/",
        "must be a public address, not a private, loopback or reserved one",
      ],
      ["0.0.0.0", "https://0.0.0.0/", "must be a public address, not a private, loopback or reserved one"],
      [
        "127.0.0.2 (loopback, but not the allowed 127.0.0.1)",
        "https://127.0.0.2/",
        "must be a public address, not a private, loopback or reserved one",
      ],
      [
        "[::ffff:127.0.0.1] (normalised to [::ffff:7f00:1])",
        "https://[::ffff:127.0.0.1]/",
        "must be a public address, not a private, loopback or reserved one",
      ],
      [
        "[::ffff:10.0.0.1]",
        "https://[::ffff:10.0.0.1]/",
        "must be a public address, not a private, loopback or reserved one",
      ],
      ["[fd00::1]", "https://[fd00::1]/", "must be a public address, not a private, loopback or reserved one"],
      ["[fe80::1]", "https://[fe80::1]/", "must be a public address, not a private, loopback or reserved one"],
      ["[::]", "https://[::]/", "must be a public address, not a private, loopback or reserved one"],
      [
        "167772161 (10.0.0.1 as one number)",
        "https://167772161/",
        "must be a public address, not a private, loopback or reserved one",
      ],
      [
        "0xa.1 (10.0.0.1 in hex)",
        "https://0xa.1/",
        "must be a public address, not a private, loopback or reserved one",
      ],
      [
        "012.0.0.1 (10.0.0.1 in octal)",
        "https://012.0.0.1/",
        "must be a public address, not a private, loopback or reserved one",
      ],
      [
        "0xc0a80101 (192.168.1.1 in hex)",
        "https://0xc0a80101/",
        "must be a public address, not a private, loopback or reserved one",
      ],
      ["a name without a dot", "https://intranet/hooks", "must be a public address with a domain name"],
      ["printer.local", "https://printer.local/", "must be a public address, not a local name"],
      ["*.localhost with a trailing dot", "https://app.localhost./", "must be a public address, not a local name"],
      ["*.local with a trailing dot", "https://printer.local./", "must be a public address, not a local name"],
      ["a dotless name with a trailing dot", "https://intranet./", "must be a public address with a domain name"],
      ["an empty label", "https://a..b/", "must have a valid host name"],
      ["only a dot", "https://./", "must have a valid host name"],
      ["a *.localhost name", "https://app.localhost/hooks", "must be a public address, not a local name"],
    ])("%s", async (_case, url, problem) => {
      await expectError(await post(apiKey, { url }), 400, `The field "url" ${problem}.`);
    });
  });

  it.each([
    ["http://127.0.0.1:9999/x"],
    ["http://localhost/x"],
    ["https://localhost:8443/x"],
    ["http://[::1]:9999/x"],
    ["https://2130706433/x"],
    ["https://0x7f.1/x"],
  ])("accepts loopback %s with the dev-only variable ALLOW_LOOPBACK_URLS", async (url) => {
    const response = await post(apiKey, { url });
    await expect(response).toHaveStatus(201);
    expect((await json<Created>(response)).url).toBe(url);
  });

  it("accepts a port and a query", async () => {
    await expect(await post(apiKey, { url: "https://partner.example:8443/hooks?tenant=7" })).toHaveStatus(201);
  });

  it.each([
    ["a public IPv4 literal", "https://93.184.216.34/hooks"],
    ["a public IPv6 literal", "https://[2606:4700:4700::1111]/hooks"],
  ])("refuses %s with 400 saying Workers fetch host names only", async (_case, url) => {
    await expectError(
      await post(apiKey, { url }),
      400,
      'The field "url" must name its host, not an IP address: Cloudflare Workers cannot fetch an IP address directly.',
      { param: "url" },
    );
  });

  it.each([
    ["over 500 characters", "d".repeat(501), 'The field "description" must be at most 500 characters long.'],
    ["not a string", 12, 'The field "description" must be a string.'],
  ])("refuses a description %s with 400", async (_case, description, sentence) => {
    await expectError(await post(apiKey, { url: HOOK, description }), 400, sentence);
  });

  it.each([
    ["malformed JSON", '{"url": "https://partner.example/hooks",'],
    ["an empty body", ""],
  ])("refuses %s with 400", async (_case, body) => {
    const response = await call("/api/v1/webhooks", {
      key: apiKey,
      method: "POST",
      body,
      headers: { "Content-Type": "application/json" },
    });
    await expectError(response, 400, "The request body is not valid JSON.", { code: "invalid_json", param: undefined });
  });

  it("names malformed JSON as such", async () => {
    const response = await post(apiKey, "{not json");
    await expectError(response, 400, "The request body is not valid JSON.");
  });

  it.each([
    ["an array", [HOOK]],
    ["a string", JSON.stringify(HOOK)],
    ["null", "null"],
  ])("refuses a body that is %s with 400", async (_case, body) => {
    const response = await post(apiKey, body);
    await expect(response).toHaveStatus(400);
  });

  it("stores nothing when it refuses", async () => {
    const fresh = await createBusiness();
    await post(fresh.apiKey, { url: "https://10.0.0.1/" });
    await post(fresh.apiKey, { url: HOOK, events: ["booking.updated"] });
    await post(fresh.apiKey, { url: HOOK, description: "d".repeat(501) });
    const rows = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.businessId, fresh.business.id));
    expect(rows).toEqual([]);
  });
});

describe("GET /api/v1/webhooks", async () => {
  const { apiKey } = await createBusiness();
  const other = await createBusiness();

  it("answers { data: [], events } for a business without endpoints, events being the whole catalog", async () => {
    const response = await list(apiKey);
    await expect(response).toHaveStatus(200);
    const body = await json<List>(response);
    expect(Object.keys(body)).toEqual(["data", "events"]);
    expect(body).toEqual({
      data: [],
      events: [
        "booking.created",
        "booking.rescheduled",
        "booking.cancelled",
        "booking.completed",
        "order.created",
        "order.preparing",
        "order.ready",
        "order.dispatched",
        "order.fulfilled",
        "order.cancelled",
        "payment.received",
        "lead.created",
        "review.created",
        "ping",
        "intake.completed",
        "action.enabled",
        "action.disabled",
        "action.change_accepted",
        "intake.enabled",
        "intake.disabled",
        "app.connected",
        "app.disconnected",
      ],
    });
    expect(body.events).toEqual([...EVENT_NAMES]);
  });

  it("lists the business's endpoints oldest first, without their secrets", async () => {
    const a = await json<Created>(await post(apiKey, { url: `${HOOK}/a`, events: ["order.created"] }));
    const b = await json<Created>(await post(apiKey, { url: `${HOOK}/b`, description: "second" }));
    const body = await json<List>(await list(apiKey));
    const healthy = { status: "enabled", disabled_reason: null, last_success_at: null };
    expect(body.data).toEqual([
      { id: a.id, url: `${HOOK}/a`, events: ["order.created"], description: "", ...healthy, created_at: a.created_at },
      { id: b.id, url: `${HOOK}/b`, events: ["*"], description: "second", ...healthy, created_at: b.created_at },
    ]);
    for (const endpoint of body.data) {
      expect(Object.keys(endpoint).sort()).toEqual(RECORD_MEMBERS);
    }
    const text = JSON.stringify(body);
    expect(text).not.toContain(a.secret);
    expect(text).not.toContain(b.secret);
  });

  it("never lists another business's endpoints", async () => {
    const mine = await json<List>(await list(apiKey));
    expect(mine.data.length).toBeGreaterThan(0);
    const theirs = await json<List>(await list(other.apiKey));
    expect(theirs.data).toEqual([]);
    const created = await json<Created>(await post(other.apiKey, { url: `${HOOK}/other` }));
    const mineAgain = await json<List>(await list(apiKey));
    expect(mineAgain.data.map((endpoint) => endpoint.id)).not.toContain(created.id);
    expect((await json<List>(await list(other.apiKey))).data.map((endpoint) => endpoint.id)).toEqual([created.id]);
  });
});

describe("DELETE /api/v1/webhooks/{id}", async () => {
  const { apiKey } = await createBusiness();
  const other = await createBusiness();

  it("answers 204 with no body, and the endpoint is gone from GET and from D1", async () => {
    const created = await json<Created>(await post(apiKey, { url: HOOK }));
    const kept = await json<Created>(await post(apiKey, { url: `${HOOK}/kept` }));
    const response = await remove(apiKey, created.id);
    await expect(response).toHaveStatus(204);
    expect(await response.text()).toBe("");
    const body = await json<List>(await list(apiKey));
    expect(body.data.map((endpoint) => endpoint.id)).toEqual([kept.id]);
    expect(await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, created.id))).toEqual([]);
  });

  it("answers 404 when the endpoint was already deleted", async () => {
    const created = await json<Created>(await post(apiKey, { url: HOOK }));
    await expect(await remove(apiKey, created.id)).toHaveStatus(204);
    await expectError(
      await remove(apiKey, created.id),
      404,
      "No webhook endpoint with that id exists for this business.",
    );
  });

  it("answers 404 for another business's endpoint, and leaves it in place", async () => {
    const theirs = await json<Created>(await post(other.apiKey, { url: `${HOOK}/theirs` }));
    await expectError(
      await remove(apiKey, theirs.id),
      404,
      "No webhook endpoint with that id exists for this business.",
    );
    const listed = await json<List>(await list(other.apiKey));
    expect(listed.data.map((endpoint) => endpoint.id)).toContain(theirs.id);
    expect(await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, theirs.id))).toHaveLength(1);
  });

  it.each(["abc", "0", "-1", "1.5", "1e3", "99999999", "99999999999999999999", "%20"])(
    "answers 404 for the id %j",
    async (id) => {
      await expectError(await remove(apiKey, id), 404, "No webhook endpoint with that id exists for this business.");
    },
  );
});

describe("at most 20 endpoints per business (docs/guides/webhooks.md, Subscribing)", () => {
  it("refuses the 21st with 403 naming the limit; deleting one makes room again", async () => {
    const { business, apiKey } = await createBusiness();
    const created: Created[] = [];
    for (let i = 0; i < 20; i++) {
      const response = await post(apiKey, { url: `${HOOK}/${i}` });
      await expect(response).toHaveStatus(201);
      created.push(await json<Created>(response));
    }
    const refused = await post(apiKey, { url: `${HOOK}/20` });
    await expectError(refused, 403, /\b20\b/);
    await expectError(
      await post(apiKey, { url: `${HOOK}/21` }),
      403,
      "A business can have at most 20 webhook endpoints: delete one before adding another.",
    );
    expect(await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.businessId, business.id))).toHaveLength(
      20,
    );
    expect((await json<List>(await list(apiKey))).data).toHaveLength(20);

    const [first] = created;
    if (!first) throw new Error("no endpoint created");
    await expect(await remove(apiKey, first.id)).toHaveStatus(204);
    await expect(await post(apiKey, { url: `${HOOK}/again` })).toHaveStatus(201);
    await expect(await post(apiKey, { url: `${HOOK}/too-many` })).toHaveStatus(403);
  });

  it("counts per business: another business is not affected by a full one", async () => {
    const full = await createBusiness();
    await Promise.all(Array.from({ length: 20 }, (_, i) => post(full.apiKey, { url: `${HOOK}/${i}` })));
    await expect(await post(full.apiKey, { url: HOOK })).toHaveStatus(403);
    const other = await createBusiness();
    await expect(await post(other.apiKey, { url: HOOK })).toHaveStatus(201);
  });

  it("counts every key of the business together", async () => {
    const { business, apiKey } = await createBusiness();
    const second = await createApiKey(business.id);
    for (let i = 0; i < 10; i++) await expect(await post(apiKey, { url: `${HOOK}/${i}` })).toHaveStatus(201);
    for (let i = 0; i < 10; i++) await expect(await post(second.apiKey, { url: `${HOOK}/${i}` })).toHaveStatus(201);
    await expect(await post(apiKey, { url: HOOK })).toHaveStatus(403);
    await expect(await post(second.apiKey, { url: HOOK })).toHaveStatus(403);
  });

  it("25 concurrent creates on an empty business: exactly 20 × 201, 5 × 403 and 20 rows stored", async () => {
    const { business, apiKey } = await createBusiness();
    const responses = await Promise.all(
      Array.from({ length: 25 }, (_, i) => post(apiKey, { url: `${HOOK}/${i}`, description: `#${i}` })),
    );
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(20);
    expect(statuses.filter((status) => status === 403)).toHaveLength(5);
    const bodies = await Promise.all(responses.map((response) => json<Created>(response)));
    const createdIds = bodies.filter((_, i) => statuses[i] === 201).map((body) => body.id);

    const rows = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.businessId, business.id));
    expect(rows).toHaveLength(20);
    expect(rows.map((row) => row.id).sort((a, b) => a - b)).toEqual([...createdIds].sort((a, b) => a - b));
    expect((await json<List>(await list(apiKey))).data).toHaveLength(20);
  });
});

describe("authentication and the plan", async () => {
  const { business, apiKey } = await createBusiness();
  const endpoint = await json<Created>(await post(apiKey, { url: HOOK }));

  it.each([
    ["GET", () => list(undefined)],
    ["POST", () => post(undefined, { url: HOOK })],
    ["POST with an invalid body", () => post(undefined, { url: "http://10.0.0.1/" })],
    ["DELETE", () => remove(undefined, endpoint.id)],
  ])("%s without a key answers 401", async (_case, request) => {
    await expectMissingCredential(await request());
  });

  it("refuses a revoked key with 401, and the endpoint survives a DELETE attempt with it", async () => {
    const revoked = await createApiKey(business.id, { revoked: true });
    await expect(await list(revoked.apiKey)).toHaveStatus(401);
    await expect(await post(revoked.apiKey, { url: HOOK })).toHaveStatus(401);
    await expect(await remove(revoked.apiKey, endpoint.id)).toHaveStatus(401);
    expect((await json<List>(await list(apiKey))).data.map((e) => e.id)).toContain(endpoint.id);
  });

  it("answers 403 on a plan without the API", async () => {
    const free = await createBusiness({ plan: "free" });
    await expect(await list(free.apiKey)).toHaveStatus(403);
    await expect(await post(free.apiKey, { url: HOOK })).toHaveStatus(403);
    const lapsed = await createBusiness({ plan: "pro", active: false });
    await expect(await post(lapsed.apiKey, { url: HOOK })).toHaveStatus(403);
    expect(await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.businessId, free.business.id))).toEqual(
      [],
    );
  });
});
