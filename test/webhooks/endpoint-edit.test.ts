import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { components } from "../../docs/examples/typed-client/partner-api";
import { webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import { deliveriesTo, ENDPOINT_NOT_FOUND, listDeliveries } from "../helpers/deliveries-api";
import { createApiKey, createBusiness, db } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { bookingObject, reportChange } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { roundTrips } from "../helpers/round-trips";
import { verifyStandardWebhook, verifyWebhookSignature } from "../helpers/verify-signature";
import { consume, deliveryRow, subscribe } from "../helpers/webhooks";

// docs/webhooks.md, Reading and changing an endpoint: GET /webhooks/{id} answers the record as GET /webhooks lists
// it, PATCH /webhooks/{id} changes url, events or description, checked as on creation, keeping the id, the secret,
// the health and the delivery history; both only on the credential's own side (docs/architecture.md, Principals and
// owner sides).

/** The endpoint record as the reference types it (its generated client's type). */
type Endpoint = components["schemas"]["WebhookEndpoint"];

const HOOK = "https://partner.example/hooks/secretary";
const CHANGE_ONE = "The request body must change at least one of url, events, description.";

const path = (id: number | string) => `/api/v1/webhooks/${id}`;
const get = (key: string, id: number | string) => call(path(id), { key });
const patch = (key: string, id: number | string, body: unknown) => call(path(id), { key, method: "PATCH", body });

async function record(key: string, id: number | string) {
  const response = await get(key, id);
  await expect(response).toHaveStatus(200);
  return json<Endpoint>(response);
}

async function listedItem(key: string, id: number) {
  const response = await call("/api/v1/webhooks", { key });
  await expect(response).toHaveStatus(200);
  return (await json<{ data: Endpoint[] }>(response)).data.find((endpoint) => endpoint.id === id);
}

async function patched(key: string, id: number, body: unknown) {
  const response = await patch(key, id, body);
  await expect(response).toHaveStatus(200);
  return json<Endpoint>(response);
}

const storedRow = (id: number) => db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();

let nextBooking = 985_000;

describe("GET /api/v1/webhooks/{id}", async () => {
  const shop = await createOwnerBusiness();
  const app = await connectApp(shop);
  const token = app.tokens.access_token;
  const other = await createBusiness();
  const keys = await subscribe(shop.apiKey, HOOK, ["booking.created", "order.created"]);
  const apps = await subscribe(token, `${HOOK}/app`);

  it("answers the endpoint record, equal to its item of GET /webhooks, without the secret", async () => {
    const response = await get(shop.apiKey, keys.id);
    await expect(response).toHaveStatus(200);
    const text = await response.clone().text();
    const body = await json<Endpoint>(response);
    expect(body).toEqual(await listedItem(shop.apiKey, keys.id));
    expect(body).toMatchObject({ id: keys.id, url: HOOK, events: ["booking.created", "order.created"] });
    expect(text).not.toContain(keys.secret);
    expect(text).not.toContain("whsec_");
    // The app reads its own the same way.
    expect(await record(token, apps.id)).toEqual(await listedItem(token, apps.id));
  });

  it("answers the same for another key of the business: the keys are one side", async () => {
    const second = await createApiKey(shop.business.id);
    expect(await record(second.apiKey, keys.id)).toEqual(await record(shop.apiKey, keys.id));
  });

  it.each([
    ["an unknown id", "999999999"],
    ["an id that is not a number", "abc"],
    ["an id with a sign", "-1"],
  ])("answers 404 for %s", async (_case, id) => {
    await expectError(await get(shop.apiKey, id), 404, ENDPOINT_NOT_FOUND);
  });

  it("answers 404 for another business's endpoint", async () => {
    await expectError(await get(other.apiKey, keys.id), 404, ENDPOINT_NOT_FOUND);
  });

  it("answers 404 for the other side's endpoint: the app's read with a key, the keys' read by the app", async () => {
    await expectError(await get(shop.apiKey, apps.id), 404, ENDPOINT_NOT_FOUND);
    await expectError(await get(token, keys.id), 404, ENDPOINT_NOT_FOUND);
    // And another app of the same business.
    const otherApp = await connectApp(shop);
    await expectError(await get(otherApp.tokens.access_token, apps.id), 404, ENDPOINT_NOT_FOUND);
  });

  it("makes one D1 round trip", async () => {
    const { response, trips } = await roundTrips(path(keys.id), { key: shop.apiKey });
    await expect(response).toHaveStatus(200);
    expect(trips).toHaveLength(1);
  });
});

describe("PATCH /api/v1/webhooks/{id}: url and events", async () => {
  const { business, apiKey } = await createBusiness();

  it("sends the next event to the new url, signed with the unchanged secret, for the new events only; history kept", {
    timeout: 20_000,
  }, async () => {
    const before = receiverBox("edit-before");
    const after = receiverBox("edit-after");
    const endpoint = await subscribe(apiKey, before.url("/hooks"), ["booking.created"]);
    const booking = bookingObject(nextBooking++);
    await expect(await reportChange(business.id, { booking })).toHaveStatus(201);
    const [first] = await before.arrived(1);
    expect(first?.headers["x-service-event"]).toBe("booking.created");
    const original = await record(apiKey, endpoint.id);

    const answer = await patched(apiKey, endpoint.id, { url: after.url("/hooks"), events: ["booking.cancelled"] });
    expect(answer).toEqual({ ...original, url: after.url("/hooks"), events: ["booking.cancelled"] });
    expect(await record(apiKey, endpoint.id)).toEqual(answer);
    expect((await storedRow(endpoint.id))?.secret).toBe(endpoint.secret);

    // A new booking is no longer subscribed: no delivery is written for it.
    const second = bookingObject(nextBooking++);
    await expect(await reportChange(business.id, { booking: second })).toHaveStatus(201);
    // Its cancellation is, and arrives at the new url.
    const cancelled = { ...second, status: "cancelled" as const };
    await expect(await reportChange(business.id, { booking: cancelled, cancelled_by: "client" })).toHaveStatus(201);
    const [arrived] = await after.arrived(1);
    expect(arrived?.headers["x-service-event"]).toBe("booking.cancelled");
    const body = arrived?.body ?? "";
    expect(JSON.parse(body)).toMatchObject({ event: "booking.cancelled", data: { booking: cancelled } });
    expect(await verifyWebhookSignature(body, arrived?.headers["x-service-signature"] ?? "", endpoint.secret)).toBe(
      true,
    );
    expect(await verifyStandardWebhook(body, new Headers(arrived?.headers), endpoint.secret)).toBe(true);
    expect(await after.recorded()).toHaveLength(1);
    expect(await before.recorded()).toHaveLength(1);

    // The history: the delivery made before the change, and the one after it, under the same endpoint id.
    const deliveries = await listDeliveries(apiKey, endpoint.id);
    expect(deliveries.data.map((delivery) => delivery.event)).toEqual(["booking.cancelled", "booking.created"]);
    expect(deliveries.data[1]).toMatchObject({ status: "delivered", attempts: [{ status_code: 200 }] });
  });

  it("sends the next attempt of a pending delivery to the new url, though its event is no longer subscribed", async () => {
    const failing = receiverBox("edit-failing");
    const fixed = receiverBox("edit-fixed");
    const endpoint = await subscribe(apiKey, failing.url("/status/500"), ["lead.created"]);
    const {
      deliveryIds: [id = 0],
    } = await deliveriesTo(business, endpoint.id, 1);
    const T0 = Date.now();
    expect(await consume(id, T0)).toEqual({ acked: false, retryDelay: 60 });
    const [failed] = await failing.arrived(1);

    await patched(apiKey, endpoint.id, { url: fixed.url("/hooks"), events: ["order.created"] });
    expect(await consume(id, T0 + 60_000)).toEqual({ acked: true, retryDelay: undefined });
    const [retried] = await fixed.arrived(1);
    expect(retried?.headers["x-service-delivery"]).toBe(String(id));
    expect(retried?.body).toBe(failed?.body);
    const body = retried?.body ?? "";
    expect(await verifyWebhookSignature(body, retried?.headers["x-service-signature"] ?? "", endpoint.secret)).toBe(
      true,
    );
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 2 });
    expect(await failing.recorded()).toHaveLength(1);
    const [listed] = (await listDeliveries(apiKey, endpoint.id)).data;
    expect(listed?.attempts.map((attempt) => attempt.status_code)).toEqual([500, 200]);
  });
});

describe("PATCH /api/v1/webhooks/{id}: what it keeps", async () => {
  const { business, apiKey } = await createBusiness();

  it("changes only the members sent; description may be cleared with an empty string; events are folded", async () => {
    const endpoint = await subscribe(apiKey, HOOK, ["booking.created"]);
    const original = await record(apiKey, endpoint.id);
    const described = await patched(apiKey, endpoint.id, { description: "Bookings to the CRM" });
    expect(described).toEqual({ ...original, description: "Bookings to the CRM" });
    const folded = await patched(apiKey, endpoint.id, { events: ["order.created", "*", "order.created"] });
    expect(folded).toEqual({ ...described, events: ["order.created", "*"] });
    const cleared = await patched(apiKey, endpoint.id, { description: "" });
    expect(cleared).toEqual({ ...folded, description: "" });
    expect(await record(apiKey, endpoint.id)).toEqual(cleared);
  });

  it("keeps the secret and a rotation's previous secret, the creator and the creation time", async () => {
    const endpoint = await subscribe(apiKey, HOOK);
    const rotation = await call(`${path(endpoint.id)}/rotate-secret`, {
      key: apiKey,
      method: "POST",
      body: { expires_in: 3600 },
    });
    await expect(rotation).toHaveStatus(200);
    const before = await storedRow(endpoint.id);
    expect(before?.previousSecret).toBe(endpoint.secret);

    await patched(apiKey, endpoint.id, { url: `${HOOK}/moved`, events: ["lead.created"], description: "moved" });
    expect(await storedRow(endpoint.id)).toEqual({
      ...before,
      url: `${HOOK}/moved`,
      events: ["lead.created"],
      description: "moved",
    });
  });

  it("leaves a disabled endpoint disabled with a new url: enabling is POST /webhooks/{id}/enable", async () => {
    const endpoint = await subscribe(apiKey, HOOK);
    const reason = "The endpoint answered 410 Gone, so it gets no new deliveries until it is enabled again.";
    await db
      .update(webhookEndpoints)
      .set({ status: "disabled", disabledReason: reason })
      .where(eq(webhookEndpoints.id, endpoint.id));
    const answer = await patched(apiKey, endpoint.id, { url: `${HOOK}/new` });
    expect(answer).toMatchObject({ url: `${HOOK}/new`, status: "disabled", disabled_reason: reason });
    const enabled = await call(`${path(endpoint.id)}/enable`, { key: apiKey, method: "POST" });
    expect(await json(enabled)).toMatchObject({ url: `${HOOK}/new`, status: "enabled", disabled_reason: null });
  });

  it("keeps the deliveries of an endpoint changed while they are pending", async () => {
    const endpoint = await subscribe(apiKey, HOOK, ["lead.created"]);
    const { deliveryIds } = await deliveriesTo(business, endpoint.id, 2);
    await patched(apiKey, endpoint.id, { events: ["order.created"] });
    const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpoint.id));
    expect(rows.map((row) => row.id).sort()).toEqual([...deliveryIds].sort());
    expect(rows.every((row) => row.status === "pending")).toBe(true);
  });

  it("makes at most two D1 round trips", async () => {
    const endpoint = await subscribe(apiKey, HOOK);
    const { response, trips } = await roundTrips(path(endpoint.id), {
      key: apiKey,
      method: "PATCH",
      body: { url: `${HOOK}/counted`, events: ["order.created"], description: "counted" },
    });
    await expect(response).toHaveStatus(200);
    expect(trips.length).toBeLessThanOrEqual(2);
  });
});

describe("PATCH /api/v1/webhooks/{id}: refusals change nothing", async () => {
  const shop = await createOwnerBusiness();
  const app = await connectApp(shop);
  const other = await createBusiness();
  const endpoint = await subscribe(shop.apiKey, HOOK, ["booking.created"]);
  const original = await record(shop.apiKey, endpoint.id);
  const originalRow = await storedRow(endpoint.id);

  it.each([
    ["an empty body", {}, CHANGE_ONE],
    ["http", { url: "http://partner.example/hooks" }, 'The field "url" must use https.'],
    [
      "a private address",
      { url: "https://10.0.0.1/hooks" },
      'The field "url" must be a public address, not a private, loopback or reserved one.',
    ],
    ["a local name", { url: "https://printer.local/" }, 'The field "url" must be a public address, not a local name.'],
    [
      "an unknown event name",
      { events: ["booking.updated"] },
      'The field "events[0]" is "booking.updated", which is not an event name (GET /webhooks lists them).',
    ],
    ["an empty events list", { events: [] }, 'The field "events" must have at least 1 item.'],
    ["a null description", { description: null }, 'The field "description" must be a string.'],
    [
      "a description over 500 characters",
      { description: "d".repeat(501) },
      'The field "description" must be at most 500 characters long.',
    ],
    ["only an unknown member", { event: ["order.created"] }, CHANGE_ONE],
    ["only the status", { status: "enabled" }, CHANGE_ONE],
    ["only the secret", { secret: "whsec_mine" }, CHANGE_ONE],
  ])("answers 400 for %s, and stores nothing", async (_case, body, sentence) => {
    await expectError(await patch(shop.apiKey, endpoint.id, body), 400, sentence);
    expect(await record(shop.apiKey, endpoint.id)).toEqual(original);
    expect(await storedRow(endpoint.id)).toEqual(originalRow);
  });

  it("answers 400 for a body that is not a JSON object", async () => {
    for (const body of ["[]", '"https://partner.example/"', "null", "{not json"]) {
      const response = await patch(shop.apiKey, endpoint.id, body);
      await expect(response, body).toHaveStatus(400);
    }
    expect(await storedRow(endpoint.id)).toEqual(originalRow);
  });

  it.each([
    ["an unknown id", "999999999"],
    ["an id that is not a number", "abc"],
  ])("answers 404 for %s", async (_case, id) => {
    await expectError(await patch(shop.apiKey, id, { description: "x" }), 404, ENDPOINT_NOT_FOUND);
  });

  it("answers 404 to another business, and to the other side (an app on the keys' endpoint, a key on the app's)", async () => {
    const change = { url: `${HOOK}/taken`, events: ["order.created"], description: "taken" };
    await expectError(await patch(other.apiKey, endpoint.id, change), 404, ENDPOINT_NOT_FOUND);
    await expectError(await patch(app.tokens.access_token, endpoint.id, change), 404, ENDPOINT_NOT_FOUND);
    expect(await storedRow(endpoint.id)).toEqual(originalRow);

    const apps = await subscribe(app.tokens.access_token, `${HOOK}/app`, ["order.created"]);
    const appsRow = await storedRow(apps.id);
    await expectError(await patch(shop.apiKey, apps.id, change), 404, ENDPOINT_NOT_FOUND);
    expect(await storedRow(apps.id)).toEqual(appsRow);
    // Each side changes its own.
    expect(await patched(app.tokens.access_token, apps.id, { description: "mine" })).toMatchObject({
      id: apps.id,
      description: "mine",
    });
  });

  it("answers 404 for an endpoint deleted before the change, and writes nothing back", async () => {
    const gone = await subscribe(shop.apiKey, HOOK);
    await expect(await call(path(gone.id), { key: shop.apiKey, method: "DELETE" })).toHaveStatus(204);
    await expectError(await patch(shop.apiKey, gone.id, { url: `${HOOK}/back` }), 404, ENDPOINT_NOT_FOUND);
    expect(await storedRow(gone.id)).toBeUndefined();
  });
});

describe("PATCH /api/v1/webhooks/{id}: changes at the same moment", async () => {
  const { apiKey } = await createBusiness();

  it("applies changes of the same members one after the other: the stored record is the later answer, whole", async () => {
    const endpoint = await subscribe(apiKey, HOOK);
    const changes = Array.from({ length: 6 }, (_, n) => ({
      url: `${HOOK}/concurrent-${n}`,
      events: [["booking.created", "order.created", "lead.created"][n % 3] as string, "review.created"],
      description: `change ${n}`,
    }));
    const answers = await Promise.all(changes.map((change) => patched(apiKey, endpoint.id, change)));
    // Each answer is its own change, whole.
    for (const [n, answer] of answers.entries()) expect(answer).toMatchObject(changes[n] ?? {});
    // The stored record is one of the answers: url, events and description all from the same change.
    const stored = await record(apiKey, endpoint.id);
    expect(answers).toContainEqual(stored);
    const n = Number(stored.url.split("-").pop());
    expect(stored).toMatchObject(changes[n] ?? {});
  });

  it("keeps both of two changes of different members", async () => {
    const endpoint = await subscribe(apiKey, HOOK, ["booking.created"]);
    const [moved, described] = await Promise.all([
      patched(apiKey, endpoint.id, { url: `${HOOK}/both` }),
      patched(apiKey, endpoint.id, { description: "both" }),
    ]);
    expect(moved.url).toBe(`${HOOK}/both`);
    expect(described.description).toBe("both");
    expect(await record(apiKey, endpoint.id)).toMatchObject({
      url: `${HOOK}/both`,
      description: "both",
      events: ["booking.created"],
    });
  });
});
