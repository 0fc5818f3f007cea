import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhookDeliveries } from "../../src/db/schema";
import { revokeApiKey } from "../../src/domain/access/api-keys";
import { call, expectError, json } from "../helpers/http";
import { ANOTHER_KEYS, type Page, twoKeys } from "../helpers/intake-answers";
import { subscribe } from "../helpers/webhooks";

/*
 * A customer's intake answers reach only the key whose intake it is (docs/webhooks.md, Intake answers stay with their
 * intake). Two keys of one business share their endpoints, so that keys can be rotated; a second key must still not
 * re-point, re-subscribe, rotate or delete the endpoint the first key's answers flow through, nor list, redeliver or
 * recover those answers' deliveries.
 */

const deliveriesOf = async (key: string, endpointId: number) =>
  json<Page>(await call(`/api/v1/webhooks/${endpointId}/deliveries`, { key }));

describe("intake answers through a shared endpoint, between two keys of one business", async () => {
  const setup = await twoKeys("eu1");
  const { key1, key2, answers, completed, endpointRow, db } = setup;
  const delivery = await completed();

  it("lets the other key see the endpoint, as every endpoint of the keys' side, without its answers", async () => {
    const listed = await json<{ data: Array<{ id: number }> }>(await call("/api/v1/webhooks", { key: key2 }));
    expect(listed.data.map((endpoint) => endpoint.id)).toContain(answers.id);
    expect((await deliveriesOf(key2, answers.id)).data).toEqual([]);
    expect((await deliveriesOf(key1, answers.id)).data.map((row) => row.id)).toEqual([delivery.id]);
    await expectError(await call(`/api/v1/events/${delivery.eventId}`, { key: key2 }), 404, /No event with that id/);
  });

  it("does not redeliver or recover another key's answers, which the owning key can", async () => {
    const redeliver = (key: string) =>
      call(`/api/v1/webhooks/${answers.id}/deliveries/${delivery.id}/redeliver`, { key, method: "POST" });
    await expectError(await redeliver(key2), 404, "No delivery with that id exists for this webhook endpoint.");
    const owed = async () =>
      (await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, delivery.id)).get())?.extraAttemptAt;
    expect(await owed()).toBeNull();

    // A failed delivery is what a recover sends again.
    const failedAt = new Date().toISOString();
    await db
      .update(webhookDeliveries)
      .set({ status: "failed", completedAt: failedAt })
      .where(eq(webhookDeliveries.id, delivery.id));
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const recover = (key: string) =>
      call(`/api/v1/webhooks/${answers.id}/recover`, { key, method: "POST", body: { since } });
    const refused = await recover(key2);
    await expect(refused).toHaveStatus(202);
    expect(await json(refused)).toEqual({ queued: 0 });
    expect(await owed()).toBeNull();

    const recovered = await recover(key1);
    expect(await json(recovered)).toEqual({ queued: 1 });
    expect(await owed()).not.toBeNull();
    await expect(await redeliver(key1)).toHaveStatus(202);
  });

  it("refuses to subscribe another key's endpoint to intake.completed, and allows every other change of it", async () => {
    const all = await subscribe(key1, "https://partner.example/all", ["*"]);
    const patch = (body: unknown) => call(`/api/v1/webhooks/${all.id}`, { key: key2, method: "PATCH", body });
    await expectError(await patch({ events: ["intake.completed"] }), 403, ANOTHER_KEYS, { code: "forbidden" });
    expect((await endpointRow(all.id))?.events).toEqual(["*"]);
    // Key rotation works for everything else: the other key re-points, rotates and deletes it.
    await expect(await patch({ url: "https://partner.example/moved" })).toHaveStatus(200);
    const rotated = await call(`/api/v1/webhooks/${all.id}/rotate-secret`, { key: key2, method: "POST" });
    await expect(rotated).toHaveStatus(200);
    await expect(await call(`/api/v1/webhooks/${all.id}`, { key: key2, method: "DELETE" })).toHaveStatus(204);
  });

  it("still answers 404 for an id that names nothing", async () => {
    await expectError(
      await call("/api/v1/webhooks/999999999", { key: key2, method: "PATCH", body: { description: "x" } }),
      404,
      /No webhook endpoint with that id/,
    );
  });

  it("lets the owning key change its own endpoint", async () => {
    const response = await call(`/api/v1/webhooks/${answers.id}`, {
      key: key1,
      method: "PATCH",
      body: { description: "Intake answers" },
    });
    await expect(response).toHaveStatus(200);
    expect((await endpointRow())?.description).toBe("Intake answers");
  });
});

describe("receiving another key's answers", () => {
  it("is not done by subscribing one's own endpoint to intake.completed", async () => {
    const { key2, completed, db } = await twoKeys("us1");
    const own = await subscribe(key2, "https://partner.example/mine", ["intake.completed"]);
    const delivery = await completed();
    const toOwn = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, own.id));
    expect(toOwn).toEqual([]);
    expect(
      (await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.eventId, delivery.eventId))).length,
    ).toBe(1);
  });
});

describe("after the owning key is revoked", async () => {
  const { business, key2, answers, completed, endpointRow, deps, db } = await twoKeys("us1");
  const delivery = await completed();
  const key1Id = (await endpointRow())?.apiKeyId ?? 0;

  it("keeps the endpoint locked while one of its answers is pending, then hands it to the other keys", async () => {
    await db.update(webhookDeliveries).set({ status: "pending" }).where(eq(webhookDeliveries.id, delivery.id));
    await revokeApiKey(deps, business.id, key1Id);
    const repoint = () =>
      call(`/api/v1/webhooks/${answers.id}`, {
        key: key2,
        method: "PATCH",
        body: { url: "https://partner.example/after" },
      });
    // A pending answer's next attempt would go to the new url.
    const url = (await endpointRow())?.url;
    await expectError(await repoint(), 403, ANOTHER_KEYS, { code: "forbidden" });
    expect((await endpointRow())?.url).toBe(url);

    await db.update(webhookDeliveries).set({ status: "delivered" }).where(eq(webhookDeliveries.id, delivery.id));
    await expect(await repoint()).toHaveStatus(200);
    // The answers it carried stay the revoked key's: not listed, not sent again to the new url.
    expect((await deliveriesOf(key2, answers.id)).data).toEqual([]);
    await expectError(
      await call(`/api/v1/webhooks/${answers.id}/deliveries/${delivery.id}/redeliver`, { key: key2, method: "POST" }),
      404,
      /No delivery with that id/,
    );
    await expect(await call(`/api/v1/webhooks/${answers.id}`, { key: key2, method: "DELETE" })).toHaveStatus(204);
  });
});
