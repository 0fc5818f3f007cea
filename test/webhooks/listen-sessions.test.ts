import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import { MAX_ENDPOINTS_PER_BUSINESS } from "../../src/domain/webhooks/endpoints";
import { isListenerUrl, MAX_LISTENING_SESSIONS } from "../../src/domain/webhooks/listener-endpoints";
import { listEndpointsForOwner } from "../../src/domain/webhooks/owner-endpoints";
import { sessionObject } from "../../src/durable-objects/jurisdictions";
import {
  KEEPALIVE_PING,
  KEEPALIVE_PONG,
  type ListeningSessionRecord,
} from "../../src/durable-objects/listening-session";
import { deps } from "../helpers/dependencies";
import { createBusiness, db } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { connect, type DeliveryMessage, openSocket, type Session, startSession } from "../helpers/listen-sessions";
import { verifyStandardWebhook, verifyWebhookSignature } from "../helpers/verify-signature";
import { attemptsOf, consume, deliveryRow, outboxOnly, subscribe } from "../helpers/webhooks";

// docs/decisions.md, Listening from a laptop: `POST /api/v1/listen-sessions` makes a listener endpoint of the
// credential's side, whose deliveries the consumer relays through the session's WebSocket (its Durable Object), and
// which ends with the socket.

/**
 * A session whose CLI answers every delivery with `reply` (a status, and the start of the local answer), and one
 * delivery to it, consumed: answers the delivery's id, the consumer's verdict and what went through the socket. The
 * socket stays open: closing it ends the session, and its endpoint's deliveries go with it.
 */
async function deliveryAnswered(reply: { status: number; body_excerpt?: string }) {
  const { business, apiKey } = await createBusiness();
  const session = await startSession(apiKey);
  const { socket, messages } = await connect(session);
  socket.addEventListener("message", (event) => {
    const { delivery_id } = JSON.parse(event.data as string) as DeliveryMessage;
    socket.send(JSON.stringify({ type: "result", delivery_id, ...reply }));
  });
  const id = await deliveryTo(business, session);
  const verdict = await consume(id, Date.now());
  return { id, verdict, messages, session, socket };
}

const objectOf = (session: Session) => sessionObject(env, session.session_id);

const endpointRow = (id: number) => db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();

const booking = () => [{ event: "booking.created" as const, data: { booking: { id: crypto.randomUUID() } } }];

/** The one delivery of an event written for the business, to the session's endpoint. */
async function deliveryTo(business: Parameters<typeof outboxOnly>[0], session: Session) {
  await outboxOnly(business, booking());
  const rows = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, session.endpoint_id));
  const newest = rows.at(-1);
  if (!newest) throw new Error("no delivery to the session");
  return newest.id;
}

describe("creating a listening session", () => {
  it("answers 201 with the session, a new secret, a socket URL and its connect token apart, expiring in 60 s", async () => {
    const { apiKey } = await createBusiness();
    const before = Date.now();
    const session = await startSession(apiKey, { events: ["booking.created"] });
    // A business of the EU shard: its session is kept in the EU jurisdiction, which its id names.
    expect(session.session_id).toMatch(/^ls_eu_[A-Za-z0-9_-]{22}$/);
    expect(session.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // The token is never in the URL, which the logs of every proxy on the way keep.
    expect(session.socket_url).toBe(`ws://localhost:8787/api/v1/listen-sessions/${session.session_id}/socket`);
    expect(session.connect_token).toMatch(/^lst_[\w-]{43}$/);
    const expiresIn = Date.parse(session.expires_at) - before;
    expect(expiresIn).toBeGreaterThan(59_000);
    expect(expiresIn).toBeLessThanOrEqual(61_000);
    const endpoint = await endpointRow(session.endpoint_id);
    expect(endpoint).toMatchObject({ url: `listen://${session.session_id}`, events: ["booking.created"] });
  });

  it("refuses a body of the wrong shape", async () => {
    const { apiKey } = await createBusiness();
    const response = await call("/api/v1/listen-sessions", { key: apiKey, method: "POST", body: { events: [] } });
    await expect(response).toHaveStatus(400);
  });

  it("opens the socket once: the token is single use", async () => {
    const { apiKey } = await createBusiness();
    const session = await startSession(apiKey);
    const { socket } = await connect(session);
    await expectError(
      await openSocket(session.socket_url, session.connect_token),
      401,
      "The connect token is wrong, expired or already used: start a new listening session.",
    );
    socket.close(1000);
  });

  it("refuses an expired token, a wrong one, another session's, one in the URL, and a request that is no WebSocket", async () => {
    const { apiKey } = await createBusiness();
    const session = await startSession(apiKey);
    const other = await startSession(apiKey);
    const url = session.socket_url;
    await expect(await openSocket(url, other.connect_token)).toHaveStatus(401);
    await expect(await openSocket(url, "lst_wrong")).toHaveStatus(401);
    // The token alone, without the subprotocol before it, or in the query as before: no credential at all.
    await expect(await openSocket(url, session.connect_token, session.connect_token)).toHaveStatus(401);
    await expect(await openSocket(`${url}?token=${session.connect_token}`, "", "")).toHaveStatus(401);
    await expect(await call(new URL(url).pathname)).toHaveStatus(400);
    await runInDurableObject(objectOf(session), async (_instance, state) => {
      const record = (await state.storage.get<ListeningSessionRecord>("session")) as ListeningSessionRecord;
      await state.storage.put("session", { ...record, tokenExpiresAt: Date.now() - 1 });
    });
    await expect(await openSocket(url, session.connect_token)).toHaveStatus(401);
    await expectError(
      await openSocket(url.replace(session.session_id, "ls_AAAAAAAAAAAAAAAAAAAAAA"), session.connect_token),
      404,
      "No listening session with that id is open.",
    );
  });

  it("ends a session never connected when its token expires: the endpoint is deleted", async () => {
    const { apiKey } = await createBusiness();
    const session = await startSession(apiKey);
    expect(await runDurableObjectAlarm(objectOf(session))).toBe(true);
    expect(await endpointRow(session.endpoint_id)).toBeUndefined();
    await expect(await openSocket(session.socket_url, session.connect_token)).toHaveStatus(404);
  });
});

describe("the listener endpoint among the business's endpoints", () => {
  it("is not listed by GET /webhooks nor to the owner, and does not count against the 20 endpoints", async () => {
    const { business, apiKey } = await createBusiness();
    const session = await startSession(apiKey);
    for (let i = 0; i < MAX_ENDPOINTS_PER_BUSINESS; i++) await subscribe(apiKey, `https://partner.example/hooks/${i}`);
    const listed = await json<{ data: Array<{ id: number; url: string }> }>(
      await call("/api/v1/webhooks", { key: apiKey }),
    );
    expect(listed.data).toHaveLength(MAX_ENDPOINTS_PER_BUSINESS);
    expect(listed.data.map(({ id }) => id)).not.toContain(session.endpoint_id);
    const owners = await listEndpointsForOwner(deps, business.id);
    expect(owners.map(({ id }) => id)).not.toContain(session.endpoint_id);
    // Full of registered endpoints, sessions still start (their own limit), and the 21st endpoint is still refused.
    await startSession(apiKey);
    const refused = await call("/api/v1/webhooks", {
      key: apiKey,
      method: "POST",
      body: { url: "https://partner.example/hooks/21" },
    });
    await expect(refused).toHaveStatus(403);
  });

  it(`allows ${MAX_LISTENING_SESSIONS} sessions at once per business`, async () => {
    const { apiKey } = await createBusiness();
    for (let i = 0; i < MAX_LISTENING_SESSIONS; i++) await startSession(apiKey);
    await expectError(
      await call("/api/v1/listen-sessions", { key: apiKey, method: "POST", body: {} }),
      403,
      `A business can have at most ${MAX_LISTENING_SESSIONS} listening sessions at once: stop one (^C) before starting another.`,
      { code: "limit_reached" },
    );
  });

  it(`keeps to ${MAX_LISTENING_SESSIONS} sessions when ${MAX_LISTENING_SESSIONS + 3} start at once`, async () => {
    const { business, apiKey } = await createBusiness();
    const started = await Promise.all(
      Array.from({ length: MAX_LISTENING_SESSIONS + 3 }, () =>
        call("/api/v1/listen-sessions", { key: apiKey, method: "POST", body: {} }),
      ),
    );
    const statuses = started.map((response) => response.status).sort((a, b) => a - b);
    expect(statuses).toEqual([...Array(MAX_LISTENING_SESSIONS).fill(201), 403, 403, 403]);
    for (const refused of started.filter((response) => response.status === 403)) {
      expect((await json<{ code: string }>(refused)).code).toBe("limit_reached");
    }
    const rows = await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.businessId, business.id));
    expect(rows.filter((row) => isListenerUrl(row.url))).toHaveLength(MAX_LISTENING_SESSIONS);
  });

  it("is read by its id on its side, cannot be changed with PATCH, and is another business's 404", async () => {
    const { apiKey } = await createBusiness();
    const other = await createBusiness();
    const session = await startSession(apiKey);
    const path = `/api/v1/webhooks/${session.endpoint_id}`;
    const read = await call(path, { key: apiKey });
    await expect(read).toHaveStatus(200);
    expect(await json(read)).toMatchObject({ id: session.endpoint_id, url: `listen://${session.session_id}` });
    await expect(await call(path, { key: other.apiKey })).toHaveStatus(404);
    const patch = { url: "https://partner.example/hooks/elsewhere" };
    await expect(await call(path, { key: apiKey, method: "PATCH", body: patch })).toHaveStatus(404);
    await expect(await call(`${path}/deliveries`, { key: apiKey })).toHaveStatus(200);
    await expect(await call(`${path}/deliveries`, { key: other.apiKey })).toHaveStatus(404);
  });
});

describe("deliveries through the socket", () => {
  it("relays the signed delivery and records the attempt with the status the CLI answers", async () => {
    const { id, verdict, messages, session, socket } = await deliveryAnswered({ status: 204 });
    expect(verdict).toEqual({ acked: true, retryDelay: undefined });
    const [message] = messages;
    expect(message).toMatchObject({ type: "delivery", delivery_id: id, event: "booking.created" });
    const { headers, body } = message as DeliveryMessage;
    expect(headers).toMatchObject({
      "Content-Type": "application/json",
      "X-Service-Event": "booking.created",
      "X-Service-Delivery": String(id),
    });
    expect(await verifyWebhookSignature(body, headers["X-Service-Signature"] ?? "", session.secret)).toBe(true);
    expect(await verifyStandardWebhook(body, new Headers(headers), session.secret)).toBe(true);
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 1 });
    expect(await attemptsOf(id)).toEqual([
      expect.objectContaining({ statusCode: 204, error: null, answerExcerpt: null }),
    ]);
    socket.close(1000);
  });

  it("records the CLI's failure status and retries on the schedule", async () => {
    const { id, verdict, socket } = await deliveryAnswered({ status: 500, body_excerpt: "boom" });
    expect(verdict).toEqual({ acked: false, retryDelay: 60 });
    // The start of the local answer is kept, as for a delivery over HTTP (the owner's history shows it).
    expect(await attemptsOf(id)).toEqual([
      expect.objectContaining({ statusCode: 500, error: "answered HTTP 500", answerExcerpt: "boom" }),
    ]);
    socket.close(1000);
  });

  it("records a local redirect as one, not followed, and cuts a long answer to its excerpt", async () => {
    const { id, verdict, socket } = await deliveryAnswered({ status: 302, body_excerpt: "é".repeat(300) });
    expect(verdict).toEqual({ acked: false, retryDelay: 60 });
    expect(await attemptsOf(id)).toEqual([
      expect.objectContaining({
        statusCode: 302,
        error: "answered with a redirect, which is not followed",
        answerExcerpt: "é".repeat(200),
      }),
    ]);
    socket.close(1000);
  });

  it("records a timeout when the CLI does not answer within the answer time", async () => {
    const { business, apiKey } = await createBusiness();
    const session = await startSession(apiKey);
    const { socket, messages } = await connect(session);
    const id = await deliveryTo(business, session);
    expect(await consume(id, Date.now(), { answerTimeoutMs: 300 })).toEqual({ acked: false, retryDelay: 60 });
    expect(messages).toHaveLength(1);
    expect(await attemptsOf(id)).toEqual([
      expect.objectContaining({ statusCode: null, error: "no answer within 0.3 seconds" }),
    ]);
    socket.close(1000);
  });

  it("records a failed connection while the session is not connected yet", async () => {
    const { business, apiKey } = await createBusiness();
    const session = await startSession(apiKey);
    const id = await deliveryTo(business, session);
    expect(await consume(id, Date.now())).toEqual({ acked: false, retryDelay: 60 });
    expect(await attemptsOf(id)).toEqual([
      expect.objectContaining({ error: "the connection failed: the listening session is not connected" }),
    ]);
  });

  it("answers the CLI's keepalive ping with a pong, from the runtime, without the object's handler", async () => {
    const { apiKey } = await createBusiness();
    const session = await startSession(apiKey);
    const { socket } = await connect(session);
    const pongs: string[] = [];
    socket.addEventListener("message", (event) => {
      if (event.data === KEEPALIVE_PONG) pongs.push(event.data);
    });
    socket.send(KEEPALIVE_PING);
    await vi.waitFor(() => expect(pongs).toHaveLength(1), { timeout: 5_000, interval: 20 });
    const answeredAt = await runInDurableObject(objectOf(session), (_, state) => {
      const [server] = state.getWebSockets();
      return server ? state.getWebSocketAutoResponseTimestamp(server) : null;
    });
    expect(answeredAt).toBeInstanceOf(Date);
    socket.close(1000);
  });

  it("stops when the socket closes: the endpoint is deleted and a later event makes no delivery for it", async () => {
    const { business, apiKey } = await createBusiness();
    const session = await startSession(apiKey);
    const { socket } = await connect(session);
    const pending = await deliveryTo(business, session);
    socket.close(1000, "bye");
    await vi.waitFor(async () => expect(await endpointRow(session.endpoint_id)).toBeUndefined(), { timeout: 5_000 });
    // Its pending delivery went with it (cascade), as for any deleted endpoint.
    expect(await deliveryRow(pending)).toBeUndefined();
    const { deliveryIds } = await outboxOnly(business, booking());
    expect(deliveryIds).toEqual([]);
    await expect(await openSocket(session.socket_url, session.connect_token)).toHaveStatus(404);
  });
});
