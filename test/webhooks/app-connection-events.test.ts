import { env } from "cloudflare:test";
import { and, eq, isNotNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events, webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { disconnectApp } from "../../src/domain/access/app-connections";
import { DISCONNECTED_REASON, MAX_APP_ENDPOINTS } from "../../src/domain/webhooks/app-endpoints";
import { page, signedIn, submit } from "../helpers/dashboard";
import { shardDependencies } from "../helpers/dependencies";
import { shardDb } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import {
  appTokenOf,
  connectClient,
  createOwnerBusiness,
  type OwnerBusiness,
  type RegisteredClient,
  registerClient,
} from "../helpers/oauth";
import { bookingObject, reportChange } from "../helpers/platform";
import { newBooking } from "../helpers/platform-changes";
import { receiverBox } from "../helpers/receiver";
import { expectServerErrors } from "../helpers/server-errors";
import { verifyStandardWebhook } from "../helpers/verify-signature";
import { outboxOnly } from "../helpers/webhooks";

// An app hears when an owner connects it and when an owner leaves (docs/guides/webhooks.md, Subscribing once as an
// app): `app.connected` and `app.disconnected` reach its own endpoints, each naming the business, and after the
// disconnection nothing more of that business does.

type Envelope = { id: string; event: string; business: { id: string; name: string }; data: Record<string, unknown> };

/** The app's endpoint on a fresh receiver box, subscribed to `events`: its id, secret and box. */
async function appEndpoint(client: RegisteredClient, events?: string[]) {
  const box = receiverBox("app-connections");
  const response = await call("/api/v1/app/webhooks", {
    key: await appTokenOf(client),
    method: "POST",
    body: { url: box.url("/hooks"), ...(events ? { events } : {}) },
  });
  await expect(response).toHaveStatus(201);
  return { ...(await json<{ id: number; secret: string }>(response)), box };
}

const envelopes = (requests: { body: string }[]) => requests.map((request) => JSON.parse(request.body) as Envelope);

async function copyIn(shop: OwnerBusiness, endpointId: number) {
  const [copy] = await shardDb(shop.shard)
    .select()
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.appEndpointId, endpointId), eq(webhookEndpoints.businessId, shop.business.id)));
  if (!copy) throw new Error("no copy of the app endpoint in the business");
  return copy;
}

const deliveriesTo = (shard: ShardName, endpointId: number) =>
  shardDb(shard).select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId));

const connectedEvents = (shop: OwnerBusiness) =>
  shardDb(shop.shard)
    .select()
    .from(events)
    .where(and(eq(events.businessId, shop.business.id), eq(events.type, "app.connected")));

const disconnect = (shop: OwnerBusiness, grantId: number) =>
  disconnectApp(shardDependencies(shop.shard), shop.business.id, grantId);

describe("app.connected and app.disconnected", () => {
  it("tell the app's endpoint of each owner who connects, in eu1 and us1, signed with its secret, once a connection", async () => {
    const client = await registerClient({ client_name: "Booking platform" });
    const endpoint = await appEndpoint(client);
    const lisbon = await createOwnerBusiness({ name: "Lisbon salon", shard: "eu1" });
    const austin = await createOwnerBusiness({ name: "Austin salon", shard: "us1" });
    await connectClient(client, lisbon);
    await connectClient(client, austin);
    const arrived = await endpoint.box.arrived(2);
    const told = envelopes(arrived);
    expect(told.map((envelope) => [envelope.event, envelope.business.name]).sort()).toEqual([
      ["app.connected", "Austin salon"],
      ["app.connected", "Lisbon salon"],
    ]);
    for (const envelope of told) expect(envelope.data).toEqual({ connected_at: expect.any(String) });
    for (const request of arrived) {
      expect(await verifyStandardWebhook(request.body, new Headers(request.headers), endpoint.secret)).toBe(true);
    }
    // The owner approving again while connected (a new authorization of the same app) begins no connection.
    await connectClient(client, lisbon);
    await expect(await reportChange(lisbon.business.id, { booking: newBooking() })).toHaveStatus(201);
    const after = envelopes(await endpoint.box.arrived(3));
    expect(after.map((envelope) => envelope.event).sort()).toEqual([
      "app.connected",
      "app.connected",
      "booking.created",
    ]);
  });

  it("copies the app's 20 endpoints into a business at its approval and tells each of them", async () => {
    const client = await registerClient();
    const token = await appTokenOf(client);
    const box = receiverBox("app-twenty");
    for (let index = 0; index < MAX_APP_ENDPOINTS; index++) {
      const body = { url: box.url(`/e${index}`), events: ["app.connected"] };
      await expect(await call("/api/v1/app/webhooks", { key: token, method: "POST", body })).toHaveStatus(201);
    }
    const shop = await createOwnerBusiness({ shard: "us1" });
    await connectClient(client, shop);
    const copies = await shardDb("us1")
      .select()
      .from(webhookEndpoints)
      .where(and(eq(webhookEndpoints.businessId, shop.business.id), isNotNull(webhookEndpoints.appEndpointId)));
    expect(copies).toHaveLength(MAX_APP_ENDPOINTS);
    const arrived = await box.arrived(MAX_APP_ENDPOINTS);
    expect(new Set(arrived.map((request) => request.path))).toHaveProperty("size", MAX_APP_ENDPOINTS);
    expect(new Set(envelopes(arrived).map((envelope) => `${envelope.event} ${envelope.business.id}`))).toEqual(
      new Set([`app.connected ${shop.business.id}`]),
    );
    expect(await connectedEvents(shop)).toHaveLength(1);
  });

  it("is told once when two approvals of the same owner race", async () => {
    const client = await registerClient();
    const endpoint = await appEndpoint(client, ["app.connected"]);
    const shop = await createOwnerBusiness({ shard: "us1" });
    await Promise.all([connectClient(client, shop), connectClient(client, shop)]);
    const told = await shardDb("us1")
      .select()
      .from(events)
      .where(and(eq(events.businessId, shop.business.id), eq(events.type, "app.connected")));
    expect(told).toHaveLength(1);
    expect(envelopes(await endpoint.box.arrived(1)).map((envelope) => envelope.event)).toEqual(["app.connected"]);
  });

  it("is told when the owner approves again after an approval whose event failed to be written", async () => {
    const client = await registerClient();
    const endpoint = await appEndpoint(client, ["app.connected"]);
    const shop = await createOwnerBusiness({ shard: "eu1" });
    // The approval's aftermath fails after the connection was stored: its event's batch is refused once.
    const trigger = `fail_app_connected_${crypto.randomUUID().replaceAll("-", "")}`;
    await env.SHARD_EU1.exec(
      `CREATE TRIGGER ${trigger} BEFORE INSERT ON events WHEN NEW.type = 'app.connected' AND NEW.business_id = '${shop.business.id}' BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
    expectServerErrors();
    await expect(connectClient(client, shop)).rejects.toThrow(/expected status 303, got 500/);
    await env.SHARD_EU1.exec(`DROP TRIGGER ${trigger}`);
    expect(await connectedEvents(shop)).toHaveLength(0);

    await connectClient(client, shop);
    await connectClient(client, shop);
    expect(await connectedEvents(shop)).toHaveLength(1);
    expect(envelopes(await endpoint.box.arrived(1)).map((envelope) => envelope.business.id)).toEqual([
      shop.business.id,
    ]);
  });

  it("a disconnection in the dashboard tells the app and ends its copy in the same request: nothing of the business follows", async () => {
    const client = await registerClient();
    const shop = await createOwnerBusiness({ name: "Porto salon", shard: "eu1" });
    await connectClient(client, shop);
    // Subscribed after the connection: no app.connected reaches it, so every request it records is below.
    const endpoint = await appEndpoint(client, ["booking.created", "app.disconnected"]);
    const copy = await copyIn(shop, endpoint.id);
    const jar = await signedIn(shop);
    expect((await page(jar, "/dashboard/webhooks")).html).toContain(endpoint.box.url("/hooks"));

    await expect(
      await submit(
        jar,
        `/dashboard/apps/${copy.oauthGrantId}/disconnect`,
        `/dashboard/apps/${copy.oauthGrantId}/disconnect`,
      ),
    ).toHaveStatus(303);
    expect(await copyIn(shop, endpoint.id)).toMatchObject({ status: "disabled", disabledReason: DISCONNECTED_REASON });
    const [told] = envelopes(await endpoint.box.arrived(1));
    expect(told).toMatchObject({
      event: "app.disconnected",
      business: { id: shop.business.id },
      data: { disconnected_at: expect.any(String) },
    });

    await expect(await reportChange(shop.business.id, { booking: newBooking() })).toHaveStatus(201);
    expect((await deliveriesTo("eu1", copy.id)).map((delivery) => delivery.status)).toEqual(["delivered"]);
    expect(await endpoint.box.recorded()).toHaveLength(1);
    // No longer the business's subscription: the owner neither lists it nor enables it again.
    expect((await page(jar, "/dashboard/webhooks")).html).not.toContain(endpoint.box.url("/hooks"));
    await expect(await submit(jar, "/dashboard/webhooks", `/dashboard/webhooks/${copy.id}/on`)).toHaveStatus(404);
    expect(await copyIn(shop, endpoint.id)).toMatchObject({ status: "disabled" });
  });

  it("drops what was still owed to the app for the business: a pending delivery is never sent after the disconnection", async () => {
    const client = await registerClient();
    const shop = await createOwnerBusiness({ shard: "us1" });
    await connectClient(client, shop);
    const endpoint = await appEndpoint(client, ["booking.created", "app.disconnected"]);
    const copy = await copyIn(shop, endpoint.id);
    // A booking whose delivery waits, written and never enqueued, in the outbox when the owner disconnects.
    await outboxOnly(shop.business, [{ event: "booking.created", data: { booking: bookingObject(913_001) } }], "us1");
    expect((await deliveriesTo("us1", copy.id)).map((delivery) => delivery.status)).toEqual(["pending"]);

    await disconnect(shop, copy.oauthGrantId ?? 0);
    const left = await deliveriesTo("us1", copy.id);
    expect(left).toHaveLength(1);
    const [event] = await shardDb("us1")
      .select()
      .from(events)
      .where(eq(events.id, left[0]?.eventId ?? ""));
    expect(event?.type).toBe("app.disconnected");
    const told = envelopes(await endpoint.box.arrived(1));
    expect(told.map((envelope) => envelope.event)).toEqual(["app.disconnected"]);
  });

  it("is told once however many disconnections race, and never again by a disconnection of a disconnected app", async () => {
    const client = await registerClient();
    const shop = await createOwnerBusiness({ shard: "eu1" });
    await connectClient(client, shop);
    const endpoint = await appEndpoint(client, ["app.disconnected"]);
    const copy = await copyIn(shop, endpoint.id);
    const results = await Promise.all([1, 2, 3, 4].map(() => disconnect(shop, copy.oauthGrantId ?? 0)));
    expect(new Set(results.map((result) => result.disconnectedAt)).size).toBe(1);
    await disconnect(shop, copy.oauthGrantId ?? 0);
    const told = await shardDb("eu1")
      .select()
      .from(events)
      .where(and(eq(events.businessId, shop.business.id), eq(events.type, "app.disconnected")));
    expect(told).toHaveLength(1);
    expect(await deliveriesTo("eu1", copy.id)).toHaveLength(1);
    await endpoint.box.arrived(1);
  });

  it("a reconnection enables the copy again and tells app.connected: the business's events reach the app again", async () => {
    const client = await registerClient();
    const shop = await createOwnerBusiness({ name: "Reno salon", shard: "us1" });
    await connectClient(client, shop);
    const endpoint = await appEndpoint(client, ["booking.created", "app.connected", "app.disconnected"]);
    const copy = await copyIn(shop, endpoint.id);
    await disconnect(shop, copy.oauthGrantId ?? 0);
    await connectClient(client, shop);
    expect(await copyIn(shop, endpoint.id)).toMatchObject({ id: copy.id, status: "enabled", disabledReason: null });
    await expect(await reportChange(shop.business.id, { booking: newBooking() })).toHaveStatus(201);
    const told = envelopes(await endpoint.box.arrived(3));
    expect(told.map((envelope) => envelope.event).sort()).toEqual([
      "app.connected",
      "app.disconnected",
      "booking.created",
    ]);
    expect(new Set(told.map((envelope) => envelope.business.name))).toEqual(new Set(["Reno salon"]));
  });

  it("are events of the app's side only: the business's API keys neither receive nor list them", async () => {
    const client = await registerClient();
    const shop = await createOwnerBusiness({ shard: "eu1" });
    const keyBox = receiverBox("keys-side");
    await expect(
      await call("/api/v1/webhooks", { key: shop.apiKey, method: "POST", body: { url: keyBox.url("/hooks") } }),
    ).toHaveStatus(201);
    const tokens = await connectClient(client, shop);
    const listed = await json<{ data: Envelope[] }>(
      await call("/api/v1/events?type=app.connected", { key: tokens.access_token }),
    );
    expect(listed.data.map((envelope) => envelope.business.id)).toEqual([shop.business.id]);
    const keys = await json<{ data: Envelope[] }>(
      await call("/api/v1/events?type=app.connected", { key: shop.apiKey }),
    );
    expect(keys.data).toEqual([]);
    await expect(await reportChange(shop.business.id, { booking: newBooking() })).toHaveStatus(201);
    expect(envelopes(await keyBox.arrived(1)).map((envelope) => envelope.event)).toEqual(["booking.created"]);
  });
});
