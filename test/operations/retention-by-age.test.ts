import { eq, inArray, like } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { KEPT_MS as IDEMPOTENCY_KEPT_MS } from "../../src/admission/idempotency";
import {
  actionCalls,
  deliveryAttempts,
  events,
  idempotencyKeys,
  oauthCodes,
  oauthTokens,
  ownerSessions,
  webhookDeliveries,
  webhookEndpoints,
} from "../../src/db/schema";
import { SANDBOX_SHARD } from "../../src/db/shards";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { RECENT_CALLS } from "../../src/domain/actions/reads";
import {
  ACTION_CALL_RETENTION_MS,
  applyRetention,
  ENDED_TOKEN_RETENTION_MS,
  EVENT_CHUNK,
  EVENT_RETENTION_MS,
  EXPIRED_RECORD_RETENTION_MS,
  retentionDeletions,
  SANDBOX_RETENTION_MS,
} from "../../src/domain/operations/retention";
import { iso } from "../../src/lib/time";
import { registerAction } from "../helpers/actions";
import { deps, testDependencies } from "../helpers/dependencies";
import { createBusiness, db, shardD1, shardDb } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { createOwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import {
  actionWithCalls,
  ago,
  callsOf,
  DAY,
  endpointOf,
  eventWithDelivery,
  grantOf,
  HOUR,
  MINUTE,
  manyEvents,
  rows,
  run,
  storedEvents,
  unique,
} from "../helpers/retention";

/**
 * docs/operations.md, What the cron does every minute: retention, run by the cron in bounded chunks. The runs take the
 * real clock over the shared database, so each test ages only the rows it writes (their timestamps), a minute past or
 * short of each limit.
 */

describe("events, deliveries and attempts go after 30 days", () => {
  it("deletes events past 30 days with their deliveries and attempts; younger ones and other businesses' stay", async () => {
    const { business } = await createBusiness();
    const { business: other } = await createBusiness();
    const endpoint = await endpointOf(business.id);
    const otherEndpoint = await endpointOf(other.id);
    const old = await eventWithDelivery(business.id, endpoint, EVENT_RETENTION_MS + MINUTE);
    // A redelivery of the old event, a day ago: it goes with its event, which it shows.
    const redelivered = await eventWithDelivery(business.id, endpoint, EVENT_RETENTION_MS + MINUTE, DAY);
    const young = await eventWithDelivery(business.id, endpoint, EVENT_RETENTION_MS - MINUTE);
    const othersYoung = await eventWithDelivery(other.id, otherEndpoint, DAY);
    await run();
    expect(await storedEvents([old.eventId, redelivered.eventId, young.eventId, othersYoung.eventId])).toEqual(
      [young.eventId, othersYoung.eventId].sort(),
    );
    const deliveryIds = [old, redelivered, young, othersYoung].map((event) => event.deliveryId);
    const deliveries = await db
      .select({ id: webhookDeliveries.id })
      .from(webhookDeliveries)
      .where(inArray(webhookDeliveries.id, deliveryIds));
    expect(deliveries.map((row) => row.id).sort()).toEqual([young.deliveryId, othersYoung.deliveryId].sort());
    const attempts = await db
      .select({ deliveryId: deliveryAttempts.deliveryId })
      .from(deliveryAttempts)
      .where(inArray(deliveryAttempts.deliveryId, deliveryIds));
    expect(attempts.map((row) => row.deliveryId).sort()).toEqual(
      [young.deliveryId, young.deliveryId, othersYoung.deliveryId, othersYoung.deliveryId].sort(),
    );
  });

  it("deletes at most one chunk a run, oldest first: 250 due events take three runs", async () => {
    const { business } = await createBusiness();
    const prefix = unique("evt_bulk");
    // Older than any other test's events, so these are the first candidates.
    await manyEvents(business.id, prefix, 250, "1980-01-01T00:00:00.000Z");
    const left = () => db.$count(events, like(events.id, `${prefix}%`));
    expect((await run()).events).toBe(EVENT_CHUNK);
    expect(await left()).toBe(150);
    await run();
    expect(await left()).toBe(50);
    await run();
    expect(await left()).toBe(0);
  });

  it("takes an event delivered to 20 endpoints, 6 attempts each, whole in one run (docs/guides/webhooks.md, Subscribing)", async () => {
    const { business } = await createBusiness();
    await Promise.all(Array.from({ length: 20 }, () => endpointOf(business.id)));
    const eventId = unique("evt_wide");
    const old = ago(EVENT_RETENTION_MS + MINUTE);
    await db
      .insert(events)
      .values({ id: eventId, businessId: business.id, type: "booking.created", envelope: "{}", createdAt: old });
    // One INSERT … SELECT each: 20 rows of 7 values would bind 140 parameters, past D1's 100.
    await shardD1
      .prepare(
        `INSERT INTO webhook_deliveries (business_id, event_id, endpoint_id, status, attempt_count, next_attempt_at, created_at)
       SELECT business_id, ?1, id, 'failed', 6, ?2, ?2 FROM webhook_endpoints WHERE business_id = ?3`,
      )
      .bind(eventId, old, business.id)
      .run();
    await shardD1
      .prepare(
        `INSERT INTO delivery_attempts (delivery_id, attempted_at, status_code, duration_ms)
       SELECT delivery.id, ?2, 503, 10 FROM webhook_deliveries AS delivery, (VALUES (1), (2), (3), (4), (5), (6))
       WHERE delivery.event_id = ?1`,
      )
      .bind(eventId, old)
      .run();
    const deliveryIds = (
      await db
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.eventId, eventId))
    ).map((row) => row.id);
    expect(deliveryIds).toHaveLength(20);
    expect(await db.$count(deliveryAttempts, inArray(deliveryAttempts.deliveryId, deliveryIds))).toBe(120);
    await run();
    expect(await storedEvents([eventId])).toEqual([]);
    expect(await db.$count(webhookDeliveries, inArray(webhookDeliveries.id, deliveryIds))).toBe(0);
    expect(await db.$count(deliveryAttempts, inArray(deliveryAttempts.deliveryId, deliveryIds))).toBe(0);
    expect(await db.$count(webhookEndpoints, eq(webhookEndpoints.businessId, business.id))).toBe(20);
  });

  it("reads about what it deletes, cascade included", async () => {
    const { business } = await createBusiness();
    const endpoint = await endpointOf(business.id);
    for (let i = 0; i < 20; i++) await eventWithDelivery(business.id, endpoint, EVENT_RETENTION_MS + MINUTE);
    await manyEvents(business.id, unique("evt_young"), 300, ago(DAY));
    const result = await retentionDeletions(deps, Date.now()).events.run();
    // 20 events, 20 deliveries and 40 attempts (at least: other tests may have left due events too).
    expect(result.meta.changes).toBeGreaterThanOrEqual(20);
    // About five reads a deleted row (index entries, the row, the foreign keys' lookups); the young events: none.
    expect(result.meta.rows_read).toBeLessThanOrEqual(result.meta.changes * 6);
  });
});

describe("action calls go after 30 days, except each action's 10 most recent", () => {
  const old = ACTION_CALL_RETENTION_MS + MINUTE;

  it("keeps the 10 most recent calls of an action however old, and the calls younger than 30 days", async () => {
    const { business } = await createBusiness();
    const dormant = await actionWithCalls(
      business.id,
      Array.from({ length: 15 }, (_, i) => old + (15 - i) * HOUR),
    );
    const busy = await actionWithCalls(business.id, [
      ...Array.from({ length: 5 }, (_, i) => old + (5 - i) * HOUR),
      ...Array.from({ length: 12 }, (_, i) => DAY - i * HOUR),
    ]);
    const few = await actionWithCalls(business.id, [old + DAY, old]);
    await run();
    expect(await callsOf(dormant.actionId)).toEqual(dormant.callIds.slice(-RECENT_CALLS));
    expect(await callsOf(busy.actionId)).toEqual(busy.callIds.slice(5));
    expect(await callsOf(few.actionId)).toEqual(few.callIds);
  });

  it("marks each call superseded as it leaves the 10 most recent, however many calls arrive at once", async () => {
    const { business, apiKey } = await createBusiness();
    const action = await registerAction(apiKey, unique("lookup"), { url: receiverBox("retention").url("/ok") });
    await switchAction(deps, business.id, action.id, true);
    const answers = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        call(`/internal/v1/businesses/${business.id}/actions/${action.name}/call`, {
          method: "POST",
          headers: RUNTIME,
          body: { conversation_id: "conv", message_id: unique(`msg${i}`), channel: "whatsapp", arguments: {} },
        }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(25).fill(200));
    const marks = await db
      .select({ id: actionCalls.id, superseded: actionCalls.superseded })
      .from(actionCalls)
      .where(eq(actionCalls.actionId, action.id))
      .orderBy(actionCalls.id);
    expect(marks.map((row) => row.superseded)).toEqual([...Array(15).fill(true), ...Array(10).fill(false)]);
    // What retention keeps is what the action shows: its 10 most recent calls.
    await db
      .update(actionCalls)
      .set({ createdAt: ago(old) })
      .where(eq(actionCalls.actionId, action.id));
    await run();
    const shown = await json<{ calls: { id: number }[] }>(await call(`/api/v1/actions/${action.id}`, { key: apiKey }));
    expect(await callsOf(action.id)).toEqual(marks.slice(15).map((row) => row.id));
    expect(shown.calls.map((row) => row.id).sort((a, b) => a - b)).toEqual(await callsOf(action.id));
  });

  it("deletes the old calls pushed out of the 10 most recent by newer ones", async () => {
    const { business } = await createBusiness();
    const action = await actionWithCalls(business.id, [old + DAY, old, ...Array.from({ length: 9 }, () => HOUR)]);
    await run();
    expect(await callsOf(action.actionId)).toEqual(action.callIds.slice(1));
  });
});

describe("expired codes, sessions and idempotency records go after a day", () => {
  const past = EXPIRED_RECORD_RETENTION_MS + MINUTE;
  const short = EXPIRED_RECORD_RETENTION_MS - MINUTE;

  it("deletes owner sessions expired a day ago; others stay", async () => {
    const { owner } = await createOwnerBusiness();
    const session = (expiresAt: string) => rows.session(owner.id, expiresAt);
    const [gone, expired, live] = await db
      .insert(ownerSessions)
      .values([session(ago(past)), session(ago(short)), session(iso(Date.now() + HOUR))])
      .returning({ id: ownerSessions.id });
    await run();
    const ids = [gone, expired, live].map((row) => row?.id ?? 0);
    const stored = await db.select({ id: ownerSessions.id }).from(ownerSessions).where(inArray(ownerSessions.id, ids));
    expect(stored.map((row) => row.id)).toEqual(ids.slice(1));
  });

  it("deletes authorization codes expired a day ago; others stay", async () => {
    const { business } = await createBusiness();
    const grantId = await grantOf(business.id);
    const codes = [ago(past), ago(short), iso(Date.now() + MINUTE)].map((expiresAt) => rows.code(grantId, expiresAt));
    await db.insert(oauthCodes).values(codes);
    await run();
    const hashes = codes.map((row) => row.codeHash);
    const stored = await db
      .select({ codeHash: oauthCodes.codeHash })
      .from(oauthCodes)
      .where(inArray(oauthCodes.codeHash, hashes));
    expect(stored.map((row) => row.codeHash).sort()).toEqual(hashes.slice(1).sort());
  });

  it("deletes idempotency records a day after they expired (24 hours after their request)", async () => {
    const { business } = await createBusiness();
    const records = [IDEMPOTENCY_KEPT_MS + past, IDEMPOTENCY_KEPT_MS + short, MINUTE].map((age) =>
      rows.idempotency(business.id, ago(age)),
    );
    await db.insert(idempotencyKeys).values(records);
    await run();
    const keys = records.map((row) => row.key);
    const stored = await db
      .select({ key: idempotencyKeys.key })
      .from(idempotencyKeys)
      .where(inArray(idempotencyKeys.key, keys));
    expect(stored.map((row) => row.key).sort()).toEqual(keys.slice(1).sort());
  });
});

describe("revoked or expired tokens go after 90 days", () => {
  it("deletes tokens revoked or expired 90 days ago; rotated-out tokens stay for reuse detection until then", async () => {
    const { business } = await createBusiness();
    const grantId = await grantOf(business.id);
    const past = ENDED_TOKEN_RETENTION_MS + MINUTE;
    const short = ENDED_TOKEN_RETENTION_MS - MINUTE;
    const token = (name: string, ended: Parameters<typeof rows.token>[2]) => rows.token(grantId, name, ended);
    const future = iso(Date.now() + DAY);
    const gone = [
      token("expired_long_ago", { expiresAt: ago(past) }),
      token("revoked_long_ago", { expiresAt: future, revokedAt: ago(past) }),
      token("rotated_expired_long_ago", { expiresAt: ago(past), rotatedAt: ago(200 * DAY) }),
    ];
    const kept = [
      token("expired_recently", { expiresAt: ago(short) }),
      token("revoked_recently", { expiresAt: ago(short), revokedAt: ago(short) }),
      // Rotated out long ago, neither revoked nor expired 90 days ago: reuse detection still needs it.
      token("rotated_long_ago", { expiresAt: ago(short), rotatedAt: ago(150 * DAY) }),
      token("live", { expiresAt: future }),
    ];
    await db.insert(oauthTokens).values([...gone, ...kept]);
    await run();
    const stored = await db
      .select({ tokenHash: oauthTokens.tokenHash })
      .from(oauthTokens)
      .where(eq(oauthTokens.grantId, grantId));
    expect(stored.map((row) => row.tokenHash).sort()).toEqual(kept.map((row) => row.tokenHash).sort());
  });
});

describe("driven by the clock: each record stays until its limit and goes a minute after", () => {
  /** The instant the records below are written; the runs are given later instants, as the cron would be. */
  const written = Date.now();
  const at = (ms: number) => iso(written + ms);
  /** Writes one record of a kind; answers whether it is still stored. */
  type Kind = (businessId: string) => Promise<() => Promise<boolean>>;
  const stored = (count: Promise<number>) => count.then((n) => n === 1);
  /** Runs at `instant` until nothing more is due then: other tests' rows fall due at such instants too. */
  const drainAt = async (instant: number) => {
    while (Object.values(await applyRetention(deps, instant)).some((deleted) => deleted > 0));
  };

  const event: Kind = async (businessId) => {
    const { eventId, deliveryId } = await eventWithDelivery(businessId, await endpointOf(businessId), 0);
    return async () =>
      (await storedEvents([eventId])).length === 1 &&
      (await stored(db.$count(webhookDeliveries, eq(webhookDeliveries.id, deliveryId))));
  };
  const supersededCall: Kind = async (businessId) => {
    const { callIds } = await actionWithCalls(businessId, Array(RECENT_CALLS + 1).fill(0));
    return async () => (await db.$count(actionCalls, inArray(actionCalls.id, callIds))) === RECENT_CALLS + 1;
  };
  const code: Kind = async (businessId) => {
    const [row] = await db
      .insert(oauthCodes)
      .values(rows.code(await grantOf(businessId), at(10 * MINUTE)))
      .returning();
    return () => stored(db.$count(oauthCodes, eq(oauthCodes.codeHash, row?.codeHash ?? "")));
  };
  const session: Kind = async () => {
    const { owner } = await createOwnerBusiness();
    const [row] = await db
      .insert(ownerSessions)
      .values(rows.session(owner.id, at(HOUR)))
      .returning();
    return () => stored(db.$count(ownerSessions, eq(ownerSessions.id, row?.id ?? 0)));
  };
  const idempotencyRecord: Kind = async (businessId) => {
    const [row] = await db
      .insert(idempotencyKeys)
      .values(rows.idempotency(businessId, at(0)))
      .returning();
    return () => stored(db.$count(idempotencyKeys, eq(idempotencyKeys.key, row?.key ?? "")));
  };
  const token =
    (ended: { expiresAt: string; revokedAt?: string }): Kind =>
    async (businessId) => {
      const [row] = await db
        .insert(oauthTokens)
        .values(rows.token(await grantOf(businessId), "token", ended))
        .returning();
      return () => stored(db.$count(oauthTokens, eq(oauthTokens.tokenHash, row?.tokenHash ?? "")));
    };

  it.each([
    ["an event, with its delivery", event, EVENT_RETENTION_MS],
    ["an action call pushed out of the 10 most recent", supersededCall, ACTION_CALL_RETENTION_MS],
    ["an authorization code expiring in 10 minutes", code, 10 * MINUTE + EXPIRED_RECORD_RETENTION_MS],
    ["an owner session expiring in an hour", session, HOUR + EXPIRED_RECORD_RETENTION_MS],
    ["an idempotency record", idempotencyRecord, IDEMPOTENCY_KEPT_MS + EXPIRED_RECORD_RETENTION_MS],
    ["a token expiring in an hour", token({ expiresAt: at(HOUR) }), HOUR + ENDED_TOKEN_RETENTION_MS],
    ["a token revoked now", token({ expiresAt: at(DAY), revokedAt: at(0) }), ENDED_TOKEN_RETENTION_MS],
  ] as const)("%s", async (_kind, write, limit) => {
    const { business } = await createBusiness();
    const isStored = await write(business.id);
    await drainAt(written + limit - MINUTE);
    expect(await isStored()).toBe(true);
    await drainAt(written + limit + MINUTE);
    expect(await isStored()).toBe(false);
  });
});

describe("in the sandbox database, events and action calls go after 3 days", () => {
  it("deletes a sandbox's events past 3 days, while a live shard keeps its own for 30", async () => {
    const sandbox = await createBusiness({ sandbox: true });
    const live = await createBusiness();
    const sandboxDb = shardDb(SANDBOX_SHARD);
    const eventAged = (businessId: string, age: number) => ({
      id: unique("evt_sandbox_age"),
      businessId,
      type: "order.created",
      envelope: "{}",
      createdAt: ago(age),
    });
    const [old, young] = [
      eventAged(sandbox.business.id, SANDBOX_RETENTION_MS + MINUTE),
      eventAged(sandbox.business.id, SANDBOX_RETENTION_MS - MINUTE),
    ];
    const liveOld = eventAged(live.business.id, SANDBOX_RETENTION_MS + MINUTE);
    await sandboxDb.insert(events).values([old, young]);
    await db.insert(events).values(liveOld);
    await applyRetention(testDependencies(SANDBOX_SHARD));
    await run();
    const kept = async (database: typeof db, ids: string[]) =>
      (await database.select({ id: events.id }).from(events).where(inArray(events.id, ids))).map((row) => row.id);
    expect(await kept(sandboxDb, [old.id, young.id])).toEqual([young.id]);
    expect(await kept(db, [liveOld.id])).toEqual([liveOld.id]);
  });
});
