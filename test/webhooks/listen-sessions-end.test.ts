import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { apiKeys, webhookEndpoints } from "../../src/db/schema";
import { sessionObject } from "../../src/durable-objects/jurisdictions";
import { SESSION_CLOSES, SESSION_LIFETIME_MS } from "../../src/durable-objects/listening-session";
import { page, post, signedIn, submit, testIdText } from "../helpers/dashboard";
import { createApiKey, shardDb } from "../helpers/fixtures";
import { call } from "../helpers/http";
import { connect, type Session, startSession } from "../helpers/listen-sessions";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { outboxOnly } from "../helpers/webhooks";

// docs/webhooks.md, Listening sessions end: a session ends with the access of the key or app that opened it, at its
// lifetime's end, or when the owner ends it on the Webhooks page; each closes its socket at once with the code that
// says why, and deletes its endpoint, so no later event reaches it.

/** A connected session of `credential`, and the close its socket received, once it has. */
async function listening(credential: string) {
  const session = await startSession(credential);
  const { socket } = await connect(session);
  let closed: { code: number; reason: string } | undefined;
  socket.addEventListener("close", (event) => {
    closed = { code: event.code, reason: event.reason };
  });
  const closedWith = () =>
    vi.waitFor(
      () => {
        if (!closed) throw new Error("the socket is still open");
        return closed;
      },
      { timeout: 5_000 },
    );
  return { session, socket, closedWith, isOpen: () => closed === undefined };
}

/** An owner's business in a regional shard, with a second key, so that revoking the first leaves access. */
async function ownerWithTwoKeys() {
  const owner = await createOwnerBusiness({ shard: "us1" });
  const db = shardDb(owner.shard);
  const [first] = await db.select().from(apiKeys).where(eq(apiKeys.businessId, owner.business.id));
  const second = await createApiKey(owner.business.id, { shard: owner.shard });
  const endpointOf = (session: Session) =>
    db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, session.endpoint_id)).get();
  const booking = () =>
    outboxOnly(
      owner.business,
      [{ event: "booking.created", data: { booking: { id: crypto.randomUUID() } } }],
      owner.shard,
    );
  return { owner, db, firstKeyId: first?.id ?? 0, second, endpointOf, booking, jar: await signedIn(owner) };
}

describe("a listening session ends when the access that opened it ends", () => {
  it("revoking its key closes its socket at once and deletes its endpoint; the other key's session stays", async () => {
    const { owner, firstKeyId, second, endpointOf, booking, jar } = await ownerWithTwoKeys();
    const revoked = await listening(owner.apiKey);
    const kept = await listening(second.apiKey);
    const path = `/dashboard/keys/${firstKeyId}/revoke`;
    expect((await submit(jar, path, path)).status).toBe(303);

    expect(await revoked.closedWith()).toEqual(SESSION_CLOSES.accessEnded);
    expect(await endpointOf(revoked.session)).toBeUndefined();
    // An event after it reaches the remaining key's session only.
    const { deliveryIds } = await booking();
    expect(deliveryIds).toHaveLength(1);
    expect(await endpointOf(kept.session)).toBeDefined();
    expect(kept.isOpen()).toBe(true);
    expect((await call("/api/v1/me", { key: owner.apiKey })).status).toBe(401);
    kept.socket.close(1000);
  });

  it("revoking the business's last key closes every session of the keys", async () => {
    const owner = await createOwnerBusiness({ shard: "eu1" });
    const [only] = await shardDb(owner.shard).select().from(apiKeys).where(eq(apiKeys.businessId, owner.business.id));
    const open = await listening(owner.apiKey);
    const path = `/dashboard/keys/${only?.id}/revoke`;
    expect((await submit(await signedIn(owner), path, path)).status).toBe(303);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.accessEnded);
  });

  it("disconnecting its app closes its socket at once and deletes its endpoint", async () => {
    const { owner, endpointOf, jar } = await ownerWithTwoKeys();
    const app = await connectApp(owner);
    const open = await listening(app.tokens.access_token);
    const path = `/dashboard/apps/${app.grantId}/disconnect`;
    expect((await submit(jar, path, path)).status).toBe(303);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.accessEnded);
    expect(await endpointOf(open.session)).toBeUndefined();
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

    const end = `/dashboard/webhooks/sessions/${open.session.endpoint_id}/end`;
    expect((await submit(jar, "/dashboard/webhooks", end)).status).toBe(303);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.endedByOwner);
    expect(await endpointOf(open.session)).toBeUndefined();
    expect((await page(jar, "/dashboard/webhooks")).html).toContain("No listening session is open.");
    // Ended already: the same button again is the 404 page.
    expect((await submit(jar, "/dashboard/webhooks", end)).status).toBe(404);
  });

  it("does not let another business's owner end a session, nor see it", async () => {
    const { owner, endpointOf } = await ownerWithTwoKeys();
    const other = await ownerWithTwoKeys();
    const open = await listening(owner.apiKey);
    const end = `/dashboard/webhooks/sessions/${open.session.endpoint_id}/end`;
    expect((await submit(other.jar, "/dashboard/webhooks", end)).status).toBe(404);
    expect((await page(other.jar, "/dashboard/webhooks")).html).not.toContain(`session-${open.session.endpoint_id}`);
    expect(await endpointOf(open.session)).toBeDefined();
    expect(open.isOpen()).toBe(true);
    // Without the page's CSRF token, the owner's own post is refused too.
    expect((await post((await ownerWithTwoKeys()).jar, end)).status).toBeGreaterThanOrEqual(400);
    open.socket.close(1000);
  });
});
