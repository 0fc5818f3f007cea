import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  idempotencyKeys,
  intakeResponses,
  intakes,
  oauthCodes,
  oauthTokens,
  ownerSessions,
  webhookDeliveries,
} from "../../src/db/schema";
import { RECENT_CALLS } from "../../src/domain/actions/reads";
import {
  ACTION_CALL_RETENTION_MS,
  applyRetention,
  EVENT_RETENTION_MS,
  retentionDeletions,
} from "../../src/domain/operations/retention";
import { runScheduled } from "../helpers/cron";
import { deps } from "../helpers/dependencies";
import { createBusiness, db, shardD1 } from "../helpers/fixtures";
import { createOwnerBusiness } from "../helpers/oauth";
import { queryPlan } from "../helpers/query-plan";
import {
  actionWithCalls,
  ago,
  callsOf,
  DAY,
  endpointOf,
  eventWithDelivery,
  grantOf,
  MINUTE,
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

describe("what retention keeps and how it finds what it deletes", () => {
  it("keeps the responses of a live intake, however old (docs/decisions.md, Operations: until their intake is deleted)", async () => {
    const { business } = await createBusiness();
    const [intake] = await db
      .insert(intakes)
      .values({
        businessId: business.id,
        name: unique("intake"),
        title: "Intake",
        description: "Asks",
        fields: [],
        createdAt: ago(400 * DAY),
        updatedAt: ago(400 * DAY),
      })
      .returning();
    const intakeId = intake?.id ?? 0;
    await db.insert(intakeResponses).values({
      intakeId,
      businessId: business.id,
      conversationId: "conv",
      channel: "whatsapp",
      runId: unique("run"),
      answers: [],
      status: "completed",
      completedAt: ago(365 * DAY),
      createdAt: ago(365 * DAY),
    });
    await run();
    expect(await db.$count(intakeResponses, eq(intakeResponses.intakeId, intakeId))).toBe(1);
  });

  it("deletes at most its chunk of each kind a run, and the next runs take the rest", async () => {
    // Whatever earlier tests left due goes first, so that the runs below count only this test's rows.
    while (Object.values(await run()).some((deleted) => deleted > 0));
    const { business } = await createBusiness();
    const { owner } = await createOwnerBusiness();
    const grantId = await grantOf(business.id);
    const endpoint = await endpointOf(business.id);
    const five = Array.from({ length: 5 }, (_, i) => i);
    for (const _ of five) await eventWithDelivery(business.id, endpoint, EVENT_RETENTION_MS + DAY);
    // 15 calls: the 5 oldest leave the 10 most recent, and are all past 30 days.
    const { actionId } = await actionWithCalls(
      business.id,
      Array.from({ length: 15 }, () => ACTION_CALL_RETENTION_MS + DAY),
    );
    const longAgo = ago(400 * DAY);
    await db.insert(oauthCodes).values(five.map(() => rows.code(grantId, longAgo)));
    await db.insert(ownerSessions).values(five.map(() => rows.session(owner.id, longAgo)));
    await db.insert(idempotencyKeys).values(five.map(() => rows.idempotency(business.id, longAgo)));
    await db.insert(oauthTokens).values(five.map(() => rows.token(grantId, "token", { expiresAt: longAgo })));
    const chunk = (deleted: number) => ({
      // D1 counts the rows the cascade deleted too: each event's delivery and its two attempts.
      events: deleted * 4,
      actionCalls: deleted,
      oauthCodes: deleted,
      ownerSessions: deleted,
      idempotencyKeys: deleted,
      oauthTokens: deleted,
    });
    expect(await applyRetention(deps, Date.now(), 2)).toEqual(chunk(2));
    expect(await applyRetention(deps, Date.now(), 2)).toEqual(chunk(2));
    expect(await applyRetention(deps, Date.now(), 2)).toEqual(chunk(1));
    expect(await applyRetention(deps, Date.now(), 2)).toEqual(chunk(0));
    expect((await callsOf(actionId)).length).toBe(RECENT_CALLS);
  });

  it("runs every other kind when one fails, and reports the failure; the next run takes the rest", async () => {
    const { business } = await createBusiness();
    const { owner } = await createOwnerBusiness();
    const endpoint = await endpointOf(business.id);
    const old = await eventWithDelivery(business.id, endpoint, EVENT_RETENTION_MS + MINUTE);
    const [session] = await db
      .insert(ownerSessions)
      .values(rows.session(owner.id, ago(400 * DAY)))
      .returning({ id: ownerSessions.id });
    const sessionStored = async () => db.$count(ownerSessions, eq(ownerSessions.id, session?.id ?? 0));
    // A D1 error in the events' statement, as D1 would answer a failed query.
    await shardD1.exec(
      `CREATE TRIGGER retention_fault BEFORE DELETE ON events WHEN OLD.id = '${old.eventId}' BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
    try {
      await expect(run()).rejects.toThrow(/^Failed query: delete from "events"/);
      expect(await storedEvents([old.eventId])).toEqual([old.eventId]);
      expect(await sessionStored()).toBe(0);
    } finally {
      await shardD1.exec("DROP TRIGGER retention_fault");
    }
    await run();
    expect(await storedEvents([old.eventId])).toEqual([]);
  });

  it("finds each kind's rows by a range scan of an index, never a scan of its table", async () => {
    const plans: Record<string, string[]> = {};
    for (const [kind, statement] of Object.entries(retentionDeletions(deps, Date.now()))) {
      const { sql, params } = statement.toSQL();
      plans[kind] = await queryPlan(shardD1, sql, params);
    }
    expect(plans).toEqual({
      events: expect.arrayContaining(["SEARCH events USING COVERING INDEX events_created (created_at<?)"]),
      actionCalls: expect.arrayContaining([
        "SEARCH action_calls USING COVERING INDEX action_calls_superseded_created (created_at<?)",
      ]),
      oauthCodes: expect.arrayContaining([
        "SEARCH oauth_codes USING COVERING INDEX oauth_codes_expires (expires_at<?)",
      ]),
      ownerSessions: expect.arrayContaining([
        "SEARCH owner_sessions USING COVERING INDEX owner_sessions_expires (expires_at<?)",
      ]),
      idempotencyKeys: expect.arrayContaining([
        "SEARCH idempotency_keys USING COVERING INDEX idempotency_keys_created (created_at<?)",
      ]),
      oauthTokens: expect.arrayContaining([
        "INDEX 1",
        "SEARCH oauth_tokens USING INDEX oauth_tokens_expires (expires_at<?)",
        "INDEX 2",
        "SEARCH oauth_tokens USING INDEX oauth_tokens_revoked (revoked_at<?)",
      ]),
    });
    for (const details of Object.values(plans)) {
      expect(details.filter((detail) => detail.startsWith("SCAN ") && !detail.includes("CONSTANT ROW"))).toEqual([]);
    }
  });

  it("runs from the Worker's cron trigger (the scheduled handler)", async () => {
    const { business } = await createBusiness();
    const endpoint = await endpointOf(business.id);
    const old = await eventWithDelivery(business.id, endpoint, EVENT_RETENTION_MS + MINUTE);
    await runScheduled();
    expect(await storedEvents([old.eventId])).toEqual([]);
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.id, old.deliveryId))).toBe(0);
  });
});
