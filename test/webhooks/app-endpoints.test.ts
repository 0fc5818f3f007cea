import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { appEndpoints, webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { SHARDS } from "../../src/db/shards";
import { disconnectApp } from "../../src/domain/access/app-connections";
import { shardDependencies } from "../helpers/dependencies";
import { globalDb, shardDb } from "../helpers/fixtures";
import { BASE, call, dispatch, expectError, json } from "../helpers/http";
import { appTokenOf, connectClient, createOwnerBusiness, grantOf, registerClient } from "../helpers/oauth";
import { reportChange } from "../helpers/platform";
import { newBooking } from "../helpers/platform-changes";
import { receiverBox } from "../helpers/receiver";
import { expectServerErrors } from "../helpers/server-errors";
import { verifyStandardWebhook } from "../helpers/verify-signature";
import { subscribe as subscribeBusiness } from "../helpers/webhooks";

// An app subscribes once (docs/guides/webhooks.md, Subscribing once as an app): its endpoint is copied into every
// business connected to it, in each business's shard, and each business's events reach it, signed with its secret.

type Created = { id: number; url: string; events: string[]; description: string; created_at: string; secret: string };
type Envelope = { id: string; event: string; business: { id: string } };

const subscribe = (token: string, body: Record<string, unknown>) =>
  call("/api/v1/app/webhooks", { key: token, method: "POST", body });

const copiesIn = (shard: ShardName, endpointId: number) =>
  shardDb(shard).select().from(webhookEndpoints).where(eq(webhookEndpoints.appEndpointId, endpointId));

describe("an app's own webhook endpoint", () => {
  it("receives the events of every business connected to the app, in eu1 and us1, signed with its secret", async () => {
    const client = await registerClient({ client_name: "Booking platform" });
    const lisbon = await createOwnerBusiness({ name: "Lisbon salon", shard: "eu1" });
    const austin = await createOwnerBusiness({ name: "Austin salon", shard: "us1" });
    await connectClient(client, lisbon);
    await connectClient(client, austin);
    const token = await appTokenOf(client);
    const box = receiverBox("app-endpoint");
    const response = await subscribe(token, { url: box.url("/hooks"), events: ["booking.created"] });
    await expect(response).toHaveStatus(201);
    const endpoint = await json<Created>(response);
    expect(endpoint).toMatchObject({ url: box.url("/hooks"), events: ["booking.created"], description: "" });
    expect(endpoint.secret).toMatch(/^whsec_/);
    // A copy in each business, on the app connection's side, in the business's own shard only.
    for (const [shop, other] of [
      [lisbon, "us1"],
      [austin, "eu1"],
    ] as const) {
      const copies = await copiesIn(shop.shard, endpoint.id);
      expect(copies).toEqual([
        expect.objectContaining({
          businessId: shop.business.id,
          oauthGrantId: (await grantOf(shop, client)).id,
          secret: endpoint.secret,
        }),
      ]);
      expect((await copiesIn(other, endpoint.id)).map((row) => row.businessId)).not.toContain(shop.business.id);
    }

    // A business connected later gets its copy when its owner approves.
    const boston = await createOwnerBusiness({ name: "Boston salon", shard: "us1" });
    await connectClient(client, boston);
    expect((await copiesIn("us1", endpoint.id)).map((row) => row.businessId).sort()).toEqual(
      [austin.business.id, boston.business.id].sort(),
    );

    for (const shop of [lisbon, austin, boston]) {
      await expect(await reportChange(shop.business.id, { booking: newBooking() })).toHaveStatus(201);
    }
    const requests = await box.arrived(3);
    const businesses = requests.map((request) => (JSON.parse(request.body) as Envelope).business.id);
    expect(businesses.sort()).toEqual([lisbon, austin, boston].map((shop) => shop.business.id).sort());
    for (const request of requests) {
      expect(await verifyStandardWebhook(request.body, new Headers(request.headers), endpoint.secret)).toBe(true);
      expect((JSON.parse(request.body) as Envelope).event).toBe("booking.created");
    }
  });

  it("delivers nothing for a business once it disconnects: its copy is ended in the disconnection's batch", async () => {
    const client = await registerClient();
    const shop = await createOwnerBusiness({ shard: "eu1" });
    await connectClient(client, shop);
    const token = await appTokenOf(client);
    const box = receiverBox("app-disconnected");
    const endpoint = await json<Created>(
      await subscribe(token, { url: box.url("/hooks"), events: ["booking.created"] }),
    );
    const grant = await grantOf(shop, client);
    await disconnectApp(shardDependencies("eu1"), shop.business.id, grant.id, { switchActionsOff: false });
    expect(await copiesIn("eu1", endpoint.id)).toEqual([
      expect.objectContaining({ businessId: shop.business.id, status: "disabled" }),
    ]);
    await expect(await reportChange(shop.business.id, { booking: newBooking() })).toHaveStatus(201);
    const deliveries = await shardDb("eu1")
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.businessId, shop.business.id));
    expect(deliveries).toEqual([]);
  });

  it("is listed, read and removed by its app alone, its copies with it", async () => {
    const client = await registerClient();
    const stranger = await registerClient();
    const shop = await createOwnerBusiness({ shard: "us1" });
    await connectClient(client, shop);
    const token = await appTokenOf(client);
    const endpoint = await json<Created>(
      await subscribe(token, { url: receiverBox().url("/hooks"), description: "All" }),
    );
    const listed = await json<{ data: Record<string, unknown>[] }>(await call("/api/v1/app/webhooks", { key: token }));
    expect(listed.data).toEqual([
      { id: endpoint.id, url: endpoint.url, events: ["*"], description: "All", created_at: endpoint.created_at },
    ]);
    const strangerToken = await appTokenOf(stranger);
    for (const method of ["GET", "DELETE"] as const) {
      await expectError(
        await call(`/api/v1/app/webhooks/${endpoint.id}`, { key: strangerToken, method }),
        404,
        "No webhook endpoint with that id exists for this app.",
      );
    }
    await expect(await call(`/api/v1/app/webhooks/${endpoint.id}`, { key: token })).toHaveStatus(200);
    await expect(await call(`/api/v1/app/webhooks/${endpoint.id}`, { key: token, method: "DELETE" })).toHaveStatus(204);
    expect(await copiesIn("us1", endpoint.id)).toEqual([]);
    await expectError(await call(`/api/v1/app/webhooks/${endpoint.id}`, { key: token }), 404, /No webhook endpoint/);
  });

  it("enables at once every business's copy that endpoint health disabled, in eu1 and us1, leaving an ended one ended", async () => {
    const client = await registerClient();
    const lisbon = await createOwnerBusiness({ shard: "eu1" });
    const austin = await createOwnerBusiness({ shard: "us1" });
    const porto = await createOwnerBusiness({ shard: "eu1" });
    for (const shop of [lisbon, austin, porto]) await connectClient(client, shop);
    const token = await appTokenOf(client);
    const box = receiverBox("app-enable");
    const endpoint = await json<Created>(
      await subscribe(token, { url: box.url("/hooks"), events: ["booking.created"] }),
    );
    // Health disabled the copies of Lisbon and Austin (a 410 from the receiver); Porto's owner disconnected the app.
    const gone = { status: "disabled" as const, disabledReason: "The endpoint answered 410 Gone." };
    for (const shard of ["eu1", "us1"] as const) {
      await shardDb(shard).update(webhookEndpoints).set(gone).where(eq(webhookEndpoints.appEndpointId, endpoint.id));
    }
    await disconnectApp(shardDependencies("eu1"), porto.business.id, (await grantOf(porto, client)).id);

    const enable = (key: string, id: number) => call(`/api/v1/app/webhooks/${id}/enable`, { key, method: "POST" });
    const stranger = await appTokenOf(await registerClient());
    await expectError(await enable(stranger, endpoint.id), 404, /No webhook endpoint with that id exists for this app/);
    await expectError(await enable("at_app_nothing", endpoint.id), 401, /needs an app's own access token/);
    const response = await enable(token, endpoint.id);
    await expect(response).toHaveStatus(200);
    expect(await json(response)).toEqual({ enabled: 2 });
    const statuses = [...(await copiesIn("eu1", endpoint.id)), ...(await copiesIn("us1", endpoint.id))].map((copy) => [
      copy.businessId,
      copy.status,
    ]);
    expect(statuses.sort()).toEqual(
      [
        [lisbon.business.id, "enabled"],
        [austin.business.id, "enabled"],
        [porto.business.id, "disabled"],
      ].sort(),
    );
    for (const shop of [lisbon, austin, porto]) {
      await expect(await reportChange(shop.business.id, { booking: newBooking() })).toHaveStatus(201);
    }
    const arrived = (await box.arrived(2)).map((request) => (JSON.parse(request.body) as Envelope).business.id);
    expect(arrived.sort()).toEqual([lisbon.business.id, austin.business.id].sort());
  });

  it("allows 20 endpoints an app, refuses an invalid body, and answers 401 without the app's token first", async () => {
    const client = await registerClient();
    const token = await appTokenOf(client);
    const created = await Promise.all(
      Array.from({ length: 21 }, (_, index) => subscribe(token, { url: receiverBox().url(`/hooks-${index}`) })),
    );
    expect(created.map((response) => response.status).sort()).toEqual([...Array(20).fill(201), 403]);
    await expectError(await subscribe(token, { url: "http://10.1.2.3/hooks" }), 400, /url/, { param: "url" });
    // An unknown member is ignored and named, as on every operation (docs/guides/errors.md, Unknown members).
    const misspelt = await subscribe(await appTokenOf(await registerClient()), {
      url: receiverBox().url("/x"),
      evnts: [],
    });
    await expect(misspelt).toHaveStatus(201);
    expect(misspelt.headers.get("Ignored-Members")).toBe("evnts");
    await expectError(
      await call("/api/v1/app/webhooks", { method: "POST", body: {} }),
      401,
      /An app access token is required/,
    );
  });
});

/** A shard's database whose inserts of endpoint copies fail (an outage met half-way); everything else reaches it. */
function refusingCopies(real: D1Database): D1Database {
  return new Proxy(real, {
    get(target, key) {
      if (key === "prepare") {
        return (query: string) => {
          if (!/^insert into "webhook_endpoints"/i.test(query.trim())) return target.prepare(query);
          const refused = {
            bind: () => refused,
            run: () => Promise.reject(new Error("injected fault: the shard's database is unavailable")),
          };
          return refused;
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("an app endpoint at the limits", () => {
  it("delivers one event to the business's 20 endpoints and the app's 20 alike: 40 deliveries", async () => {
    const client = await registerClient();
    const shop = await createOwnerBusiness({ shard: "eu1" });
    await connectClient(client, shop);
    const token = await appTokenOf(client);
    for (let index = 0; index < 20; index++) {
      await subscribeBusiness(shop.apiKey, receiverBox(`own-${index}`).url("/hooks"));
      await expect(await subscribe(token, { url: receiverBox(`app-${index}`).url("/hooks") })).toHaveStatus(201);
    }
    const response = await reportChange(shop.business.id, { booking: newBooking() });
    await expect(response).toHaveStatus(201);
    const deliveries = await shardDb("eu1")
      .select({ endpoint: webhookEndpoints.appEndpointId })
      .from(webhookDeliveries)
      .innerJoin(webhookEndpoints, eq(webhookEndpoints.id, webhookDeliveries.endpointId))
      .where(eq(webhookDeliveries.businessId, shop.business.id));
    expect(deliveries).toHaveLength(40);
    expect(deliveries.filter((row) => row.endpoint !== null)).toHaveLength(20);
  }, 30_000);

  it("leaves nothing when a shard fails half-way through a creation, and answers the failure", async () => {
    expectServerErrors();
    const client = await registerClient();
    const lisbon = await createOwnerBusiness({ shard: "eu1" });
    const austin = await createOwnerBusiness({ shard: "us1" });
    await connectClient(client, lisbon);
    await connectClient(client, austin);
    const token = await appTokenOf(client);
    const request = new Request(`${BASE}/api/v1/app/webhooks`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ url: receiverBox().url("/hooks") }),
    });
    const { binding } = SHARDS.us1;
    const failed = await dispatch(request, { [binding]: refusingCopies(env[binding]) });
    await expect(failed).toHaveStatus(500);
    expect(await globalDb.select().from(appEndpoints).where(eq(appEndpoints.clientId, client.client_id))).toEqual([]);
    const copies = await shardDb("eu1")
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.businessId, lisbon.business.id));
    expect(copies).toEqual([]);
    // Sent again once the shard is back, it is made whole.
    const again = await subscribe(token, { url: receiverBox().url("/hooks") });
    await expect(again).toHaveStatus(201);
    const endpoint = await json<Created>(again);
    expect((await copiesIn("us1", endpoint.id)).map((row) => row.businessId)).toEqual([austin.business.id]);
  });
});
