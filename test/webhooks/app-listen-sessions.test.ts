import { env, runDurableObjectAlarm } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { requestAppToken } from "../../sdk/src/index";
import type { components } from "../../sdk/src/partner-api";
import { appEndpoints, webhookEndpoints } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { MAX_APP_ENDPOINTS } from "../../src/domain/webhooks/app-endpoints";
import { MAX_ENDPOINTS_PER_BUSINESS } from "../../src/domain/webhooks/endpoints";
import { MAX_LISTENING_SESSIONS, SESSION_CLOSES } from "../../src/domain/webhooks/listener-endpoints";
import { sessionObject } from "../../src/durable-objects/jurisdictions";
import { page, signedIn, submit, testIdText } from "../helpers/dashboard";
import { globalDb, shardDb } from "../helpers/fixtures";
import { BASE, call, dispatch, expectError, json } from "../helpers/http";
import { answeringEvery, openSocket, startSession } from "../helpers/listen-sessions";
import {
  bodyCredentials,
  connectClient,
  createOwnerBusiness,
  type OwnerBusiness,
  postToken,
  type RegisteredClient,
  registerClient,
} from "../helpers/oauth";
import { verifyStandardWebhook } from "../helpers/verify-signature";
import { consumeBatch, outboxOnly, subscribe } from "../helpers/webhooks";

// docs/decisions.md, Listening as an app: `POST /api/v1/app/listen-sessions` makes an app endpoint whose url is the
// session's listener url, copied into every business connected to the app, so that each business's events come
// through the one socket, and the session's end deletes it with every copy.

type AppSession = components["schemas"]["AppListenSession"];
type Envelope = { event: string; business: { id: string; name: string } };

/** The app's own token, as the SDK gets it (client credentials; the test clients authenticate in the body). */
const appTokenOf = async (client: RegisteredClient) =>
  (
    await requestAppToken(
      { clientId: client.client_id, clientSecret: client.client_secret ?? "", authMethod: "client_secret_post" },
      { baseUrl: `${BASE}/api/v1`, fetch: (request) => dispatch(request) },
    )
  ).access_token;

const start = (token: string, body: unknown = {}) =>
  call("/api/v1/app/listen-sessions", { key: token, method: "POST", body });

/** A connected app session whose CLI answers every delivery 200 (`answeringEvery`). */
async function appListening(token: string, body: unknown = {}) {
  const response = await start(token, body);
  await expect(response).toHaveStatus(201);
  return answeringEvery(await json<AppSession>(response));
}

/** An app with a business connected in each of `shards`, named after its shard, and the app's token. */
async function appConnectedIn(...shards: ShardName[]) {
  const client = await registerClient({ client_name: "Booking platform" });
  const shops: OwnerBusiness[] = [];
  for (const shard of shards) {
    const shop = await createOwnerBusiness({ name: `Salon ${shard} ${shops.length}`, shard });
    await connectClient(client, shop);
    shops.push(shop);
  }
  return { client, shops, token: await appTokenOf(client) };
}

/** A new booking of the business, its deliveries written and run through the real consumer. */
async function bookingIn(shop: OwnerBusiness) {
  const { deliveryIds } = await outboxOnly(
    shop.business,
    [{ event: "booking.created", data: { booking: { id: crypto.randomUUID() } } }],
    shop.shard,
  );
  return consumeBatch(
    deliveryIds.map((deliveryId) => ({ deliveryId, shard: shop.shard })),
    Date.now(),
  );
}

const copiesIn = (shard: ShardName, appEndpointId: number) =>
  shardDb(shard).select().from(webhookEndpoints).where(eq(webhookEndpoints.appEndpointId, appEndpointId));

const appEndpointRow = (id: number) => globalDb.select().from(appEndpoints).where(eq(appEndpoints.id, id)).get();

/** The session's app endpoint and its copies in eu1 and us1 are gone. */
async function expectEnded(session: AppSession) {
  await vi.waitFor(async () => expect(await appEndpointRow(session.endpoint_id)).toBeUndefined(), { timeout: 5_000 });
  expect(await copiesIn("eu1", session.endpoint_id)).toEqual([]);
  expect(await copiesIn("us1", session.endpoint_id)).toEqual([]);
  await expect(await openSocket(session.socket_url, session.connect_token)).toHaveStatus(404);
}

describe("an app's listening session", () => {
  it("relays the events of a business in eu1 and one in us1 through one socket, each naming its business, signed with the session's secret", async () => {
    const { shops, token } = await appConnectedIn("eu1", "us1");
    const open = await appListening(token, { events: ["booking.created"] });
    // The object of a session that relays EU businesses' events is in the EU jurisdiction, whatever the app's.
    expect(open.session.session_id).toMatch(/^ls_eu_[A-Za-z0-9_-]{22}$/);
    for (const shop of shops) {
      expect(await copiesIn(shop.shard, open.session.endpoint_id)).toEqual([
        expect.objectContaining({
          businessId: shop.business.id,
          url: `listen://${open.session.session_id}`,
          events: ["booking.created"],
        }),
      ]);
      expect(await bookingIn(shop)).toEqual([{ acked: true, retryDelay: undefined }]);
    }
    const envelopes = open.messages.map((message) => JSON.parse(message.body) as Envelope);
    expect(envelopes.map((envelope) => envelope.business.name)).toEqual(shops.map((shop) => shop.business.name));
    for (const message of open.messages) {
      expect(await verifyStandardWebhook(message.body, new Headers(message.headers), open.session.secret)).toBe(true);
    }
    open.socket.close(1000);
  });

  it("reaches a business connected after it started", async () => {
    const { client, token } = await appConnectedIn("eu1");
    const open = await appListening(token);
    const later = await createOwnerBusiness({ name: "Connected later", shard: "us1" });
    expect(await copiesIn("us1", open.session.endpoint_id)).toEqual([]);
    await connectClient(client, later);
    expect(await copiesIn("us1", open.session.endpoint_id)).toEqual([
      expect.objectContaining({ businessId: later.business.id }),
    ]);
    // The approval's own `app.connected`, then the booking: both through the session's socket.
    await bookingIn(later);
    const names = open.messages.map((message) => (JSON.parse(message.body) as Envelope).business.name);
    expect(names).toContain("Connected later");
    expect(open.messages.map((message) => message.event)).toContain("booking.created");
    open.socket.close(1000);
  });

  it("ends with its socket: the app endpoint and every business's copy are deleted", async () => {
    const { shops, token } = await appConnectedIn("eu1", "us1");
    const open = await appListening(token);
    open.socket.close(1000, "bye");
    await expectEnded(open.session);
    expect(await bookingIn(shops[0] as OwnerBusiness)).toEqual([]);
  });

  it("ends when its connect token expires unused, or when its lifetime is over", async () => {
    const { token } = await appConnectedIn("eu1", "us1");
    const unused = await json<AppSession>(await start(token));
    expect(await copiesIn("us1", unused.endpoint_id)).toHaveLength(1);
    expect(await runDurableObjectAlarm(sessionObject(env, unused.session_id))).toBe(true);
    await expectEnded(unused);

    const open = await appListening(token);
    expect(await runDurableObjectAlarm(sessionObject(env, open.session.session_id))).toBe(true);
    expect(await open.closedWith()).toEqual(SESSION_CLOSES.lifetimeOver);
    await expectEnded(open.session);
  });

  it(`is one of the app's ${MAX_APP_ENDPOINTS} endpoints, listed with them, and refused beyond them`, async () => {
    const { token } = await appConnectedIn("us1");
    for (let i = 1; i < MAX_APP_ENDPOINTS; i++) {
      const created = await call("/api/v1/app/webhooks", {
        key: token,
        method: "POST",
        body: { url: `https://platform.example/hooks/${i}` },
      });
      await expect(created).toHaveStatus(201);
    }
    const open = await appListening(token);
    const listed = await json<{ data: Array<Record<string, unknown>> }>(
      await call("/api/v1/app/webhooks", { key: token }),
    );
    expect(listed.data).toHaveLength(MAX_APP_ENDPOINTS);
    expect(listed.data).toContainEqual(
      expect.objectContaining({
        id: open.session.endpoint_id,
        url: `listen://${open.session.session_id}`,
        description: "secretary listen",
      }),
    );
    await expectError(
      await start(token),
      403,
      `An app can have at most ${MAX_APP_ENDPOINTS} webhook endpoints, its listening sessions among them: delete one or stop a session before starting another.`,
      { code: "limit_reached" },
    );
    // Its end gives its place back.
    open.socket.close(1000);
    await expectEnded(open.session);
    const again = await appListening(token);
    again.socket.close(1000);
  });

  it(`counts neither among a business's ${MAX_LISTENING_SESSIONS} sessions nor its ${MAX_ENDPOINTS_PER_BUSINESS} endpoints`, async () => {
    const { shops, token } = await appConnectedIn("eu1");
    const [shop] = shops as [OwnerBusiness];
    const open = await appListening(token);
    for (let i = 0; i < MAX_LISTENING_SESSIONS; i++) await startSession(shop.apiKey);
    for (let i = 0; i < MAX_ENDPOINTS_PER_BUSINESS; i++) {
      await subscribe(shop.apiKey, `https://partner.example/hooks/${i}`);
    }
    const listed = await json<{ data: Array<{ id: number }> }>(await call("/api/v1/webhooks", { key: shop.apiKey }));
    expect(listed.data).toHaveLength(MAX_ENDPOINTS_PER_BUSINESS);
    expect(open.isOpen()).toBe(true);
    open.socket.close(1000);
  });

  it("goes on for the app's other businesses when one owner ends it, or a connection's tokens are revoked", async () => {
    const { client, token } = await appConnectedIn();
    const lisbon = await createOwnerBusiness({ name: "Lisbon salon", shard: "eu1" });
    const austin = await createOwnerBusiness({ name: "Austin salon", shard: "us1" });
    await connectClient(client, lisbon);
    const tokens = await connectClient(client, austin);
    const open = await appListening(token);
    const [lisbonCopy] = await copiesIn("eu1", open.session.endpoint_id);

    // The owner sees the app's session among the business's, and ends it there: its business's copy alone.
    const jar = await signedIn(lisbon);
    const listed = await page(jar, "/dashboard/webhooks");
    expect(testIdText(listed.html, `session-${lisbonCopy?.id}`)).toContain("Opened by the app Booking platform");
    const end = `/dashboard/listening-sessions/${lisbonCopy?.id}/end`;
    await expect(await submit(jar, "/dashboard/webhooks", end)).toHaveStatus(303);
    expect(await copiesIn("eu1", open.session.endpoint_id)).toEqual([]);
    expect(await bookingIn(lisbon)).toEqual([]);

    // Revoking a connection's tokens ends the sessions opened with them, not the app's own.
    const revoked = await postToken(
      { token: tokens.refresh_token, ...bodyCredentials(client) },
      { path: "/api/oauth/revoke" },
    );
    await expect(revoked).toHaveStatus(200);
    expect(await copiesIn("us1", open.session.endpoint_id)).toHaveLength(1);
    expect(await bookingIn(austin)).toEqual([{ acked: true, retryDelay: undefined }]);
    expect(open.messages.map((message) => (JSON.parse(message.body) as Envelope).business.name)).toEqual([
      "Austin salon",
    ]);
    expect(open.isOpen()).toBe(true);
    open.socket.close(1000);
  });

  it("answers 401 without the app's own token, before a body of the wrong shape, which is a 400", async () => {
    const { shops, token } = await appConnectedIn("us1");
    const [shop] = shops as [OwnerBusiness];
    await expectError(await start(""), 401, /An app access token is required/);
    for (const credential of [shop.apiKey, "at_app_wrong"]) {
      await expectError(await start(credential, { events: [] }), 401, /This needs an app's own access token/);
    }
    await expect(await start(token, { events: [] })).toHaveStatus(400);
  });
});
