import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import { REUSE_REVOKES_AFTER_MS } from "../../src/domain/oauth/refresh-rotation";
import { SESSION_CLOSES, SESSION_LIFETIME_MS } from "../../src/domain/webhooks/listener-endpoints";
import { sessionObject } from "../../src/durable-objects/jurisdictions";
import { page, post, signedIn, submit, testIdText } from "../helpers/dashboard";
import { createApiKey, shardDb } from "../helpers/fixtures";
import { call } from "../helpers/http";
import { answeringEvery, type Session, startSession } from "../helpers/listen-sessions";
import { bodyCredentials, connectApp, createOwnerBusiness, postToken, refresh, setRotatedAgo } from "../helpers/oauth";
import { consumeBatch, outboxOnly, subscribe } from "../helpers/webhooks";

// docs/webhooks.md, Listening sessions end: a session ends with the access of the key or app that opened it, at its
// lifetime's end, or when the owner ends it on the Webhooks page; each closes its socket at once with the code that
// says why, and deletes its endpoint, so no later event reaches it.

/** A connected session of `credential` whose CLI answers every delivery 200 (`answeringEvery`). */
const listening = async (credential: string) => answeringEvery(await startSession(credential));

/** An owner's business in a regional shard, with a second key, so that revoking the first leaves access. */
async function ownerWithTwoKeys() {
  const owner = await createOwnerBusiness({ shard: "us1" });
  const db = shardDb(owner.shard);
  const [first] = await db.select().from(apiKeys).where(eq(apiKeys.businessId, owner.business.id));
  const second = await createApiKey(owner.business.id, { shard: owner.shard });
  const endpointOf = (session: Session) =>
    db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, session.endpoint_id)).get();
  /** A new booking, its deliveries written and run through the real consumer: answers their endpoints. */
  const booking = async () => {
    const { deliveryIds } = await outboxOnly(
      owner.business,
      [{ event: "booking.created", data: { booking: { id: crypto.randomUUID() } } }],
      owner.shard,
    );
    await consumeBatch(
      deliveryIds.map((deliveryId) => ({ deliveryId, shard: owner.shard })),
      Date.now(),
    );
    const rows = deliveryIds.length
      ? await db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, deliveryIds))
      : [];
    return rows.map((row) => row.endpointId);
  };
  return { owner, db, firstKeyId: first?.id ?? 0, second, endpointOf, booking, jar: await signedIn(owner) };
}

describe("a listening session ends when the access that opened it ends", () => {
  it("revoking its key closes its socket at once and deletes its endpoint; later events reach the other key's session only", async () => {
    const { owner, firstKeyId, second, endpointOf, booking, jar } = await ownerWithTwoKeys();
    const revoked = await listening(owner.apiKey);
    const kept = await listening(second.apiKey);
    expect((await booking()).sort()).toEqual([revoked.session.endpoint_id, kept.session.endpoint_id].sort());
    expect(revoked.messages).toHaveLength(1);

    const path = `/dashboard/keys/${firstKeyId}/revoke`;
    await expect(await submit(jar, path, path)).toHaveStatus(303);
    expect(await revoked.closedWith()).toEqual(SESSION_CLOSES.accessEnded);
    expect(await endpointOf(revoked.session)).toBeUndefined();
    await expect(await call("/api/v1/me", { key: owner.apiKey })).toHaveStatus(401);

    expect(await booking()).toEqual([kept.session.endpoint_id]);
    expect(revoked.messages).toHaveLength(1);
    expect(kept.messages).toHaveLength(2);
    expect(kept.isOpen()).toBe(true);
    kept.socket.close(1000);
  });

  it("revoking the business's last key closes every session of the keys", async () => {
    const owner = await createOwnerBusiness({ shard: "eu1" });
    const [only] = await shardDb(owner.shard).select().from(apiKeys).where(eq(apiKeys.businessId, owner.business.id));
    const open = await listening(owner.apiKey);
    const path = `/dashboard/keys/${only?.id}/revoke`;
    await expect(await submit(await signedIn(owner), path, path)).toHaveStatus(303);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.accessEnded);
  });

  it("disconnecting its app closes its socket at once and deletes its endpoint; a later event is not relayed", async () => {
    const { owner, endpointOf, booking, jar } = await ownerWithTwoKeys();
    const app = await connectApp(owner);
    const open = await listening(app.tokens.access_token);
    const listed = await page(jar, "/dashboard/webhooks");
    expect(testIdText(listed.html, `session-${open.session.endpoint_id}`)).toContain(
      `Opened by the app ${app.client.client_name}`,
    );
    expect(await booking()).toEqual([open.session.endpoint_id]);
    expect(open.messages).toHaveLength(1);

    const path = `/dashboard/apps/${app.grantId}/disconnect`;
    await expect(await submit(jar, path, path)).toHaveStatus(303);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.accessEnded);
    expect(await endpointOf(open.session)).toBeUndefined();
    expect(await booking()).toEqual([]);
    expect(open.messages).toHaveLength(1);
  });

  it("revoking the app's tokens (RFC 7009) ends its sessions; its registered endpoints stay with the connection", async () => {
    const { owner, endpointOf, booking } = await ownerWithTwoKeys();
    const app = await connectApp(owner);
    const open = await listening(app.tokens.access_token);
    const registered = await subscribe(app.tokens.access_token, "https://partner.example/hooks");
    const revoked = await postToken(
      { token: app.tokens.refresh_token, ...bodyCredentials(app.client) },
      { path: "/api/oauth/revoke" },
    );
    await expect(revoked).toHaveStatus(200);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.accessEnded);
    expect(await endpointOf(open.session)).toBeUndefined();
    expect(await endpointOf({ ...open.session, endpoint_id: registered.id })).toBeDefined();
    expect((await booking()).includes(open.session.endpoint_id)).toBe(false);
    expect(open.messages).toHaveLength(0);
  });

  it("a refresh token reused, which revokes the whole connection, ends its sessions too", async () => {
    const owner = await createOwnerBusiness();
    const app = await connectApp(owner);
    const open = await listening(app.tokens.access_token);
    await expect(await refresh(app.client, app.tokens.refresh_token)).toHaveStatus(200);
    await setRotatedAgo(app.tokens.refresh_token, REUSE_REVOKES_AFTER_MS);
    await expect(await refresh(app.client, app.tokens.refresh_token)).toHaveStatus(400);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.accessEnded);
  });

  it("the object relays nothing once the endpoint is gone, even before the close reaches it", async () => {
    const { owner, db, endpointOf } = await ownerWithTwoKeys();
    const open = await listening(owner.apiKey);
    const relay = () =>
      sessionObject(env, open.session.session_id).relay({
        shard: owner.shard,
        deliveryId: 1,
        endpointId: open.session.endpoint_id,
        event: "booking.created",
        headers: {},
        body: "{}",
        timeoutMs: 5_000,
      });
    expect(await relay()).toMatchObject({ kind: "delivered", status: 200 });
    // What the batch that ends the access does, as a delivery claimed before it reaches the object.
    await db.delete(webhookEndpoints).where(eq(webhookEndpoints.id, open.session.endpoint_id));
    expect(await endpointOf(open.session)).toBeUndefined();
    expect(await relay()).toEqual({ kind: "connection_failed", error: "the listening session ended" });
    expect(open.messages).toHaveLength(1);
    open.socket.close(1000);
  });
});

describe("a listening session's lifetime", () => {
  it(`is ${SESSION_LIFETIME_MS / 3_600_000} hours from its creation: then its socket is closed and its endpoint deleted`, async () => {
    const { owner, endpointOf } = await ownerWithTwoKeys();
    const before = Date.now();
    const open = await listening(owner.apiKey);
    const object = sessionObject(env, open.session.session_id);
    const alarm = await runInDurableObject(object, (_, state) => state.storage.getAlarm());
    expect(alarm).toBeGreaterThanOrEqual(before + SESSION_LIFETIME_MS);
    expect(alarm).toBeLessThanOrEqual(Date.now() + SESSION_LIFETIME_MS);
    expect(await runDurableObjectAlarm(object)).toBe(true);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.lifetimeOver);
    expect(await endpointOf(open.session)).toBeUndefined();
  });
});

describe("the owner's Webhooks page", () => {
  it("lists each open session, who opened it and since when, and ends one with its button", async () => {
    const { owner, second, endpointOf, jar } = await ownerWithTwoKeys();
    await shardDb(owner.shard).update(apiKeys).set({ label: "Laptop key" }).where(eq(apiKeys.id, second.apiKeyId));
    const open = await listening(second.apiKey);
    const listed = await page(jar, "/dashboard/webhooks");
    const row = testIdText(listed.html, `session-${open.session.endpoint_id}`);
    expect(row).toMatch(/Opened with the API key Laptop key sk_live_us1_[\w-]{4}…/);
    expect(row).toMatch(/every event except intake answers, since \d+ \w+ \d{4}, \d\d:\d\d/);

    const end = `/dashboard/listening-sessions/${open.session.endpoint_id}/end`;
    await expect(await submit(jar, "/dashboard/webhooks", end)).toHaveStatus(303);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.endedByOwner);
    expect(await endpointOf(open.session)).toBeUndefined();
    expect((await page(jar, "/dashboard/webhooks")).html).toContain("No listening session is open.");
    // Ended already: the same button again is the 404 page.
    await expect(await submit(jar, "/dashboard/webhooks", end)).toHaveStatus(404);
  });

  it("does not let another business's owner end a session, nor see it", async () => {
    const { owner, endpointOf } = await ownerWithTwoKeys();
    const other = await ownerWithTwoKeys();
    const open = await listening(owner.apiKey);
    const end = `/dashboard/listening-sessions/${open.session.endpoint_id}/end`;
    await expect(await submit(other.jar, "/dashboard/webhooks", end)).toHaveStatus(404);
    expect((await page(other.jar, "/dashboard/webhooks")).html).not.toContain(`session-${open.session.endpoint_id}`);
    expect(await endpointOf(open.session)).toBeDefined();
    expect(open.isOpen()).toBe(true);
    // Without the page's CSRF token, the owner's own post is refused too.
    expect((await post((await ownerWithTwoKeys()).jar, end)).status).toBeGreaterThanOrEqual(400);
    open.socket.close(1000);
  });
});
