import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events } from "../../src/db/schema";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { KEPT_FOR_MS } from "../../src/domain/webhooks/event-log";
import { deps } from "../helpers/dependencies";
import { createApiKey, createBusiness, db } from "../helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "../helpers/http";
import { createIntake, runtimeIntake } from "../helpers/intakes";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { bookingObject, reportChange } from "../helpers/platform";
import { apiKeyPrincipal } from "../helpers/principals";
import { receiverBox } from "../helpers/receiver";
import { roundTrips } from "../helpers/round-trips";
import { outboxOnly, subscribe } from "../helpers/webhooks";

// docs/webhooks.md, "Events you were sent (or could have been)". `GET /events?type=&limit=&starting_after=` and `GET
// /events/{id}`: kept 30 days, newest first, the envelope exactly as delivered, and only what the credential could have
// received.

type Envelope = { id: string; event: string; created_at: string; data: Record<string, unknown>; test?: true };
type Page = { data: Envelope[]; has_more: boolean };

const NOT_FOUND = "No event with that id exists for this credential.";
const BAD_CURSOR =
  'The query parameter "starting_after" is not the id of an event this credential can list (events are kept 30 days).';

const list = async (key: string, query = "") => {
  const response = await call(`/api/v1/events${query}`, { key });
  await expect(response).toHaveStatus(200);
  return json<Page>(response);
};
const ids = (page: Page) => page.data.map((envelope) => envelope.id);

/** Every page of a listing, walked with `starting_after` as a partner walks it. */
async function walk(key: string, query: string) {
  const pages: Page[] = [];
  let after = "";
  for (;;) {
    const page = await list(key, `?${query}${after}`);
    pages.push(page);
    if (!page.has_more) return pages;
    after = `&starting_after=${page.data.at(-1)?.id}`;
  }
}

/** The business's event ids newest first (docs/guides/webhooks.md, Events list and replay), id breaking ties of one batch. */
async function newestFirst(businessId: string, type?: string) {
  const rows = await db
    .select({ id: events.id, createdAt: events.createdAt })
    .from(events)
    .where(and(eq(events.businessId, businessId), type === undefined ? undefined : eq(events.type, type)));
  return rows
    .sort((a, b) => (a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1))
    .map((row) => row.id);
}

describe("an event as it was delivered", async () => {
  const { business, apiKey } = await createBusiness({ name: "Café Zoë — «Ünïcode»" });
  const box = receiverBox("events-api");
  await subscribe(apiKey, box.url("/hooks"), ["booking.created"]);

  it("answers GET /events and GET /events/{id} with the envelope text the endpoint received, byte for byte", async () => {
    const reported = await reportChange(business.id, {
      booking: bookingObject(91_001, { notes: "Tea, « no sugar »" }),
    });
    await expect(reported).toHaveStatus(201);
    const [request] = await box.arrived(1);
    const delivered = request?.body ?? "";
    const eventId = JSON.parse(delivered).id as string;

    const one = await call(`/api/v1/events/${eventId}`, { key: apiKey });
    await expect(one).toHaveStatus(200);
    expect(one.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(await one.text()).toBe(delivered);

    const listed = await call("/api/v1/events", { key: apiKey });
    const text = await listed.text();
    expect(text).toBe(`{"data":[${delivered}],"has_more":false}`);
    expect(JSON.parse(text).data[0]).toEqual({
      id: eventId,
      event: "booking.created",
      created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      business: { id: business.id, handle: business.handle, name: business.name },
      // The booking as stored, with the service's updated_at (docs/decisions.md, Paging and sync).
      data: {
        booking: {
          ...bookingObject(91_001, { notes: "Tea, « no sugar »" }),
          updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T[\d:.]{12}Z$/),
        },
      },
    });
  });
});

describe("pages of events", async () => {
  const { business, apiKey } = await createBusiness();
  // 250 events in three writes: 120 and 80 share one created_at each (the ties a report of many events makes), so the
  // order and the cursor must also hold within one instant.
  const kinds = ["lead.created", "review.created", "order.created"] as const;
  for (const size of [120, 80, 50]) {
    await outboxOnly(
      business,
      Array.from({ length: size }, (_, i) => ({ event: kinds[i % 3] ?? "lead.created", data: { n: i } })),
    );
  }
  const all = await newestFirst(business.id);

  it("answers 25 by default, newest first, and says there are more", async () => {
    expect(all).toHaveLength(250);
    const page = await list(apiKey);
    expect(ids(page)).toEqual(all.slice(0, 25));
    expect(page.has_more).toBe(true);
  });

  it("walks every event exactly once with limit=100 and starting_after, in order", async () => {
    const pages = await walk(apiKey, "limit=100");
    expect(pages.map((page) => [page.data.length, page.has_more])).toEqual([
      [100, true],
      [100, true],
      [50, false],
    ]);
    expect(pages.flatMap(ids)).toEqual(all);
  });

  it("says has_more false on a page that ends exactly at the last event", async () => {
    const page = await list(apiKey, `?limit=50&starting_after=${all[199]}`);
    expect(ids(page)).toEqual(all.slice(200));
    expect(page.has_more).toBe(false);
    const empty = await list(apiKey, `?starting_after=${all[249]}`);
    expect(empty).toEqual({ data: [], has_more: false });
  });

  it("filters by one event name, through every page", async () => {
    const reviews = await newestFirst(business.id, "review.created");
    expect(reviews).toHaveLength(84);
    const pages = await walk(apiKey, "type=review.created&limit=40");
    expect(pages.map((page) => page.data.length)).toEqual([40, 40, 4]);
    expect(pages.flatMap(ids)).toEqual(reviews);
    expect(pages.flatMap((page) => page.data.map((envelope) => envelope.event))).toEqual(
      reviews.map(() => "review.created"),
    );
    expect(await list(apiKey, "?type=ping")).toEqual({ data: [], has_more: false });
  });

  it("lists only the last 30 days: an older event is neither listed, nor found, nor a cursor", async () => {
    const [old, recent] = all.slice(-2) as [string, string];
    const now = Date.now();
    await db
      .update(events)
      .set({ createdAt: new Date(now - KEPT_FOR_MS - 60_000).toISOString() })
      .where(eq(events.id, old));
    await db
      .update(events)
      .set({ createdAt: new Date(now - KEPT_FOR_MS + 3_600_000).toISOString() })
      .where(eq(events.id, recent));
    const listed = (await walk(apiKey, "limit=100")).flatMap(ids);
    expect(listed).toHaveLength(249);
    expect(listed).not.toContain(old);
    expect(listed.at(-1)).toBe(recent);
    await expectError(await call(`/api/v1/events/${old}`, { key: apiKey }), 404, NOT_FOUND);
    await expect(await call(`/api/v1/events/${recent}`, { key: apiKey })).toHaveStatus(200);
    await expectError(await call(`/api/v1/events?starting_after=${old}`, { key: apiKey }), 400, BAD_CURSOR);
  });
});

describe("who may list an event", async () => {
  // One business with two API keys and a connected app, and another business.
  const owner = await createOwnerBusiness();
  const { business, apiKey: keyA } = owner;
  const { apiKey: keyB, apiKeyId: keyBId } = await createApiKey(business.id);
  const app = await connectApp(owner);
  const appToken = app.tokens.access_token;
  const other = await createBusiness();
  const keyAId = (await apiKeyPrincipal(keyA)).apiKeyId;

  const { emitted } = await outboxOnly(business, [
    { event: "lead.created", data: { to: "everyone" } },
    {
      event: "intake.completed",
      data: { to: "key A" },
      audience: { principal: { apiKeyId: keyAId, oauthGrantId: null } },
    },
    {
      event: "intake.completed",
      data: { to: "key B" },
      audience: { principal: { apiKeyId: keyBId, oauthGrantId: null } },
    },
    { event: "action.enabled", data: { to: "the keys" }, audience: { side: null } },
    { event: "intake.enabled", data: { to: "the app" }, audience: { side: app.grantId } },
  ]);
  const [everyone, ofKeyA, ofKeyB, ofTheKeys, ofTheApp] = emitted.map((event) => event.id) as string[];
  // The app's own `app.connected`, written when the owner approved it: the app's alone.
  const [connected] = await db
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.businessId, business.id), eq(events.type, "app.connected")));
  // An event nobody could receive: an intake.completed whose intake was deleted before audiences were stored.
  const nobody = `evt_nobody${crypto.randomUUID().replaceAll("-", "")}`;
  await db.insert(events).values({
    id: nobody,
    businessId: business.id,
    type: "intake.completed",
    envelope: JSON.stringify({ id: nobody, event: "intake.completed" }),
    audience: "none",
    createdAt: new Date().toISOString(),
  });
  const [elsewhere] = (await outboxOnly(other.business, [{ event: "lead.created", data: {} }])).emitted.map(
    (e) => e.id,
  );

  it.each([
    ["key A", () => keyA, () => [ofTheKeys, ofKeyA, everyone]],
    ["key B", () => keyB, () => [ofTheKeys, ofKeyB, everyone]],
    ["the app", () => appToken, () => [ofTheApp, everyone, connected?.id]],
  ])("lists to %s only the events it could have received", async (_who, key, expected) => {
    const listed = ids(await list(key(), "?limit=100"));
    expect([...listed].sort()).toEqual([...expected()].sort());
  });

  it.each([
    ["key B, another key's intake.completed", () => keyB, () => ofKeyA],
    ["the app, a key's intake.completed", () => appToken, () => ofKeyA],
    ["the app, the keys' lifecycle event", () => appToken, () => ofTheKeys],
    ["a key, the app's lifecycle event", () => keyA, () => ofTheApp],
    ["a key, an event nobody could receive", () => keyA, () => nobody],
    ["a key, another business's event", () => keyA, () => elsewhere],
    ["the app, an id that is none", () => appToken, () => "evt_doesnotexist"],
    ["a key, an id of another shape", () => keyA, () => "12"],
  ])("answers %s with the same 404 as an unknown id", async (_case, key, id) => {
    await expectError(await call(`/api/v1/events/${id()}`, { key: key() }), 404, NOT_FOUND);
  });

  it("finds its own events by id", async () => {
    for (const [key, id] of [
      [keyA, ofKeyA],
      [keyB, ofTheKeys],
      [appToken, ofTheApp],
      [appToken, everyone],
    ] as const) {
      const response = await call(`/api/v1/events/${id}`, { key });
      await expect(response).toHaveStatus(200);
      expect((await json<Envelope>(response)).id).toBe(id);
    }
  });

  it("refuses as a cursor an event the credential cannot list, with the sentence of an unknown one", async () => {
    for (const [key, id] of [
      [keyB, ofKeyA],
      [appToken, ofTheKeys],
      [keyA, elsewhere],
      [keyA, nobody],
      [keyA, "evt_doesnotexist"],
    ] as const) {
      await expectError(await call(`/api/v1/events?starting_after=${id}`, { key }), 400, BAD_CURSOR);
    }
    // The five were written in one batch, at one instant: after a cursor come those of smaller id.
    const after = [ofKeyA, everyone]
      .filter((id) => (id ?? "") < (ofTheKeys ?? ""))
      .sort()
      .reverse();
    expect(ids(await list(keyA, `?starting_after=${ofTheKeys}`))).toEqual(after);
  });
});

describe("intake.completed of the business's intakes", async () => {
  const { business, apiKey: keyA } = await createBusiness({ name: "Van Go Movers" });
  const { apiKey: keyB } = await createApiKey(business.id);
  const intake = await createIntake(keyA, {
    fields: [{ id: "full_name", label: "What is your name?", type: "text", required: true }],
  });
  await switchIntakeOn(deps, business.id, intake.id);

  it("lists a completed intake's event to the key that registered it, and to no other key", async () => {
    const cid = `conv-events-${crypto.randomUUID()}`;
    const runtime = runtimeIntake(business);
    const started = await runtime.start(cid, { intake_id: intake.id, channel: "whatsapp", customer: {} });
    await expect(started).toHaveStatus(201);
    const done = await runtime.answer(cid, { full_name: "Mo Ali" });
    expect((await json(done)).status).toBe("completed");

    const [completed] = (await list(keyA, "?type=intake.completed")).data;
    expect(completed).toMatchObject({ event: "intake.completed", data: { intake: { id: intake.id } } });
    expect(await list(keyB, "?type=intake.completed")).toEqual({ data: [], has_more: false });
    await expectError(await call(`/api/v1/events/${completed?.id}`, { key: keyB }), 404, NOT_FOUND);
  });
});

describe("validation and credentials", async () => {
  const { business, apiKey } = await createBusiness();
  const revoked = await createApiKey(business.id, { revoked: true });

  it.each([
    ["limit=0", 'The query parameter "limit" must be a whole number from 1 to 100.'],
    ["limit=101", 'The query parameter "limit" must be a whole number from 1 to 100.'],
    ["limit=1e2", 'The query parameter "limit" must be a whole number from 1 to 100.'],
    ["limit=ten", 'The query parameter "limit" must be a whole number from 1 to 100.'],
    [
      "type=booking.moved",
      'The query parameter "type" is "booking.moved", which is not an event name (GET /webhooks lists them).',
    ],
    ["type=*", 'The query parameter "type" is "*", which is not an event name (GET /webhooks lists them).'],
    [
      "starting_after=12",
      'The query parameter "starting_after" must be an event id: evt_ followed by letters, digits, _ or -.',
    ],
    ["starting_after=evt_unknown", BAD_CURSOR],
  ])("refuses %s with a 400 naming the parameter", async (query, sentence) => {
    await expectError(await call(`/api/v1/events?${query}`, { key: apiKey }), 400, sentence);
  });

  it("accepts the limits at their edges", async () => {
    await expect(await call("/api/v1/events?limit=1", { key: apiKey })).toHaveStatus(200);
    await expect(await call("/api/v1/events?limit=100", { key: apiKey })).toHaveStatus(200);
  });

  it("answers 401 without a credential or with a revoked one, before any 400 or 404", async () => {
    await expectMissingCredential(await call("/api/v1/events"));
    await expectMissingCredential(await call("/api/v1/events/evt_x"));
    await expectError(await call("/api/v1/events?limit=0", { key: revoked.apiKey }), 401, /revoked/);
    await expectError(await call("/api/v1/events/evt_x", { key: revoked.apiKey }), 401, /revoked/);
  });
});

describe("D1 round trips", async () => {
  const { business, apiKey } = await createBusiness();
  const owner = await createOwnerBusiness();
  const app = await connectApp(owner);
  const [first] = (
    await outboxOnly(business, [
      { event: "lead.created", data: {} },
      { event: "lead.created", data: {} },
    ])
  ).emitted.map((event) => event.id);
  const [ofTheApp] = (await outboxOnly(owner.business, [{ event: "lead.created", data: {} }])).emitted.map((e) => e.id);

  it.each([
    ["the list", () => "/api/v1/events?limit=100"],
    ["a filtered page after a cursor", () => `/api/v1/events?type=lead.created&starting_after=${first}`],
    ["one event", () => `/api/v1/events/${first}`],
  ])("reads %s in one round trip, with an API key and with an access token", async (_case, path) => {
    for (const [key, url] of [
      [apiKey, path()],
      [app.tokens.access_token, path().replace(first ?? "", ofTheApp ?? "")],
    ] as const) {
      // The first request of an hour also records the credential's use, after its answer: measured is another one.
      await call("/api/v1/me", { key });
      const { response, trips } = await roundTrips(url, { key });
      await expect(response).toHaveStatus(200);
      expect(trips).toHaveLength(1);
    }
  });
});
