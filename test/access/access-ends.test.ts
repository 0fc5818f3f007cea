import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import { revokeApiKey } from "../../src/domain/access/api-keys";
import { disconnectApp } from "../../src/domain/access/app-connections";
import { LEASE_MS } from "../../src/domain/webhooks/delivery-claim";
import { deps } from "../helpers/dependencies";
import { createApiKey, db } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { bookingObject, reportChange } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { claimOne, consume, consumeBatch, outboxOnly } from "../helpers/webhooks";

// docs/architecture.md, What happens when access ends: deliveries follow access. Each case against the real receiver,
// through the real queue and consumer.

let nextBooking = 880_000;

/** Subscribes the credential's side to booking.created at a fresh receiver box. */
async function endpointOf(credential: string, name: string) {
  const box = receiverBox(name);
  const response = await call("/api/v1/webhooks", {
    key: credential,
    method: "POST",
    body: { url: box.url("/hook"), events: ["booking.created"] },
  });
  await expect(response).toHaveStatus(201);
  return { box, id: (await json<{ id: number }>(response)).id };
}

/** Reports a new booking and waits until `expected` receives its delivery. */
async function reportAndWaitFor(businessId: string, expected: ReturnType<typeof receiverBox>) {
  const response = await reportChange(businessId, { booking: bookingObject(nextBooking++) });
  expect(response.status, await response.clone().text()).toBeLessThan(300);
  await vi.waitFor(async () => expect(await expected.recorded()).toHaveLength(1), { timeout: 10_000, interval: 50 });
}

const endpointRow = (id: number) => db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();

describe("deliveries follow access", () => {
  it("after an app is disconnected, a booking reaches the key's endpoint and not the app's", async () => {
    const shop = await createOwnerBusiness();
    const app = await connectApp(shop);
    const keySide = await endpointOf(shop.apiKey, "key-side");
    const appSide = await endpointOf(app.tokens.access_token, "app-side");

    const result = await disconnectApp(deps, shop.business.id, app.grantId);
    expect(result.endpointsDeleted).toBe(1);
    expect(await endpointRow(appSide.id)).toBeUndefined();

    await reportAndWaitFor(shop.business.id, keySide.box);
    expect(await appSide.box.recorded()).toEqual([]);
    expect(await endpointRow(keySide.id)).toBeDefined();
  });

  it("after the business's last key is revoked, a booking reaches no endpoint of the API keys (an app's still does)", async () => {
    const shop = await createOwnerBusiness();
    const app = await connectApp(shop);
    const keySide = await endpointOf(shop.apiKey, "last-key");
    const appSide = await endpointOf(app.tokens.access_token, "app-stays");
    const keyId = (await db.query.apiKeys.findFirst({ where: (k, { eq }) => eq(k.businessId, shop.business.id) }))?.id;

    const result = await revokeApiKey(deps, shop.business.id, keyId ?? 0);
    expect(result.endpointsDeleted).toBe(1);
    expect(await endpointRow(keySide.id)).toBeUndefined();

    await reportAndWaitFor(shop.business.id, appSide.box);
    expect(await keySide.box.recorded()).toEqual([]);
  });

  it("after one of two keys is revoked, the keys' endpoint still receives", async () => {
    const shop = await createOwnerBusiness();
    const second = await createApiKey(shop.business.id);
    const keySide = await endpointOf(second.apiKey, "two-keys");

    const result = await revokeApiKey(deps, shop.business.id, second.apiKeyId);
    expect(result.endpointsDeleted).toBe(0);
    expect(await endpointRow(keySide.id)).toBeDefined();

    await reportAndWaitFor(shop.business.id, keySide.box);
    // The remaining key still reads and deletes it: the endpoint belongs to the business's keys together.
    const listed = await json<{ data: Array<{ id: number }> }>(await call("/api/v1/webhooks", { key: shop.apiKey }));
    expect(listed.data.map((endpoint) => endpoint.id)).toEqual([keySide.id]);
  });

  it("a delivery claimed before a disconnection and attempted after it is not sent", async () => {
    const shop = await createOwnerBusiness();
    const app = await connectApp(shop);
    const appSide = await endpointOf(app.tokens.access_token, "claimed");
    const { deliveryIds } = await outboxOnly(shop.business, [
      { event: "booking.created", data: { booking: bookingObject(nextBooking++) } },
    ]);
    const [deliveryId] = deliveryIds;
    if (deliveryId === undefined) throw new Error("no delivery");
    const now = Date.now();
    // A consumer claims it, then stops before sending (a crash): the message will come back after the lease.
    expect(await claimOne(deliveryId, now)).toBeDefined();

    await disconnectApp(deps, shop.business.id, app.grantId);
    const gone = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, deliveryId)).get();
    expect(gone).toBeUndefined();

    // The message comes back once the lease is over: the claim finds nothing to send, and the message is done.
    expect(await consume(deliveryId, now + LEASE_MS + 1_000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await appSide.box.recorded()).toEqual([]);
  });

  // At the maximum (docs/guides/webhooks.md, Subscribing): 20 endpoints on one event, 10 on each side, every delivery written and pending when access
  // ends. The side whose access ended gets none of its 10; the other side gets all of its 10.
  it.each(["the app is disconnected", "the last key is revoked"])(
    "20 endpoints with a pending delivery each: when %s, only the other side's 10 are sent",
    async (ending) => {
      const shop = await createOwnerBusiness();
      const app = await connectApp(shop);
      const keyBox = receiverBox("max-keys");
      const appBox = receiverBox("max-app");
      for (let i = 0; i < 10; i++) {
        const body = (box: ReturnType<typeof receiverBox>) => ({ url: box.url(`/${i}`), events: ["booking.created"] });
        await expect(
          await call("/api/v1/webhooks", { key: shop.apiKey, method: "POST", body: body(keyBox) }),
        ).toHaveStatus(201);
        const appSide = await call("/api/v1/webhooks", {
          key: app.tokens.access_token,
          method: "POST",
          body: body(appBox),
        });
        await expect(appSide).toHaveStatus(201);
      }
      const { deliveryIds } = await outboxOnly(shop.business, [
        { event: "booking.created", data: { booking: bookingObject(nextBooking++) } },
      ]);
      expect(deliveryIds).toHaveLength(20);

      let ended: { endpointsDeleted: number };
      if (ending === "the app is disconnected") {
        ended = await disconnectApp(deps, shop.business.id, app.grantId);
      } else {
        const key = await db.query.apiKeys.findFirst({ where: (k, { eq }) => eq(k.businessId, shop.business.id) });
        ended = await revokeApiKey(deps, shop.business.id, key?.id ?? 0);
      }
      expect(ended.endpointsDeleted).toBe(10);

      const outcomes = await consumeBatch(deliveryIds, Date.now());
      expect(outcomes.every((outcome) => outcome.acked)).toBe(true);
      const [sent, notSent] = ending === "the app is disconnected" ? [keyBox, appBox] : [appBox, keyBox];
      expect(
        (await sent.recorded()).map((request) => request.path.slice(request.path.lastIndexOf("/"))).sort(),
      ).toEqual(Array.from({ length: 10 }, (_, i) => `/${i}`).sort());
      expect(await notSent.recorded()).toEqual([]);
    },
  );
});
