import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { shardDatabase } from "../../src/db/client";
import { actionCalls, apiKeys } from "../../src/db/schema";
import { actionsForSecretary, enabledActions } from "../../src/domain/actions/for-secretary";
import { reviewedVersion, switchAction } from "../../src/domain/actions/owner-decisions";
import { CHAT_CHANNELS } from "../../src/names-and-limits";
import {
  type Action,
  create,
  DESCRIPTION,
  getOne,
  list,
  NO_PARAMETERS,
  NOT_FOUND,
  PARAMETERS,
  patch,
  post,
  remove,
  rowOf,
  rowsOfBusiness,
  TIMESTAMP,
  validBody,
  type WithCalls,
} from "../helpers/actions-api";
import { deps, testDependencies } from "../helpers/dependencies";
import { createApiKey, createBusiness, DEFAULT_SHARD, db, shardD1 } from "../helpers/fixtures";
import { expectError, expectMissingCredential, json } from "../helpers/http";

describe("GET and DELETE /api/v1/actions/{id}, and who sees what", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();

  it("lists the business's actions oldest first, and an empty list for a business without any", async () => {
    const fresh = await createBusiness();
    expect(await json(await list(fresh.apiKey))).toEqual({ data: [] });
    const a = await create(fresh.apiKey, { name: "zz_first" });
    const b = await create(fresh.apiKey, { name: "aa_second" });
    const body = await json<{ data: Action[] }>(await list(fresh.apiKey));
    expect(body.data.map((action) => action.id)).toEqual([a.id, b.id]);
  });

  it("answers 404 with the same sentence for another business's action as for an unknown id", async () => {
    const theirs = await create(other.apiKey);
    await expectError(await getOne(apiKey, theirs.id), 404, NOT_FOUND);
    await expectError(await getOne(apiKey, 99_999_999), 404, NOT_FOUND);
    await expectError(await remove(apiKey, theirs.id), 404, NOT_FOUND);
    expect((await json<{ data: Action[] }>(await list(apiKey))).data.map((a) => a.id)).not.toContain(theirs.id);
    const { secret: _, ...shown } = theirs;
    expect(await json(await getOne(other.apiKey, theirs.id))).toEqual({ ...shown, calls: [] });
    expect(await rowOf(theirs.id)).toBeDefined();
  });

  it.each(["abc", "0", "-1", "1.5", "1e3", "99999999999999999999", "%20"])(
    "answers 404 to GET and DELETE for the id %j",
    async (id) => {
      await expectError(await getOne(apiKey, id), 404, NOT_FOUND);
      await expectError(await remove(apiKey, id), 404, NOT_FOUND);
    },
  );

  it("deletes with 204 and no body; then GET, PATCH and DELETE answer 404", async () => {
    const created = await create(apiKey);
    const kept = await create(apiKey);
    const response = await remove(apiKey, created.id);
    await expect(response).toHaveStatus(204);
    expect(await response.text()).toBe("");
    await expectError(await getOne(apiKey, created.id), 404, NOT_FOUND);
    await expectError(await patch(apiKey, created.id, { title: "x" }), 404, NOT_FOUND);
    await expectError(await remove(apiKey, created.id), 404, NOT_FOUND);
    expect(await rowOf(created.id)).toBeUndefined();
    const ids = (await json<{ data: Action[] }>(await list(apiKey))).data.map((a) => a.id);
    expect(ids).toContain(kept.id);
    expect(ids).not.toContain(created.id);
  });

  it("deletes the action's calls with it", async () => {
    const created = await create(apiKey);
    await db.insert(actionCalls).values(callRow(created.id, business.id, 0));
    await expect(await remove(apiKey, created.id)).toHaveStatus(204);
    expect(await db.select().from(actionCalls).where(eq(actionCalls.actionId, created.id))).toEqual([]);
  });

  it("GET one shows the 10 most recent calls, newest first, as call records", async () => {
    const created = await create(apiKey);
    for (let i = 0; i < 12; i++) await db.insert(actionCalls).values(callRow(created.id, business.id, i));
    const body = await json<WithCalls>(await getOne(apiKey, created.id));
    expect(body.calls).toHaveLength(10);
    expect(body.calls.map((c) => c.arguments)).toEqual(Array.from({ length: 10 }, (_, i) => ({ n: 11 - i })));
    expect(body.calls[0]).toEqual({
      id: expect.any(Number),
      status: "success",
      arguments: { n: 11 },
      http_status: 200,
      error: null,
      duration_ms: 42,
      created_at: expect.stringMatching(TIMESTAMP),
    });
    expect(JSON.stringify(body)).not.toContain(created.secret);
  });

  it("shares actions across the business's keys: another key sees, changes and deletes them", async () => {
    const second = await createApiKey(business.id);
    const created = await create(apiKey);
    const seen = await json<WithCalls>(await getOne(second.apiKey, created.id));
    expect(seen).toMatchObject({ id: created.id, source: "api_key" });
    const listed = await json<{ data: Action[] }>(await list(second.apiKey));
    expect(listed.data.find((a) => a.id === created.id)?.source).toBe("api_key");
    await expect(await patch(second.apiKey, created.id, { title: "Changed by the second key" })).toHaveStatus(200);
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).title).toBe("Changed by the second key");
    await expect(await remove(second.apiKey, created.id)).toHaveStatus(204);
    await expect(await getOne(apiKey, created.id)).toHaveStatus(404);
  });

  it("keeps an action when the key that created it is revoked", async () => {
    const temporary = await createApiKey(business.id);
    const created = await create(temporary.apiKey);
    await db.update(apiKeys).set({ revokedAt: new Date().toISOString() }).where(eq(apiKeys.id, temporary.apiKeyId));
    await expect(await getOne(temporary.apiKey, created.id)).toHaveStatus(401);
    await expect(await getOne(apiKey, created.id)).toHaveStatus(200);
  });

  describe("authentication", async () => {
    const created = await create(apiKey);

    it.each([
      ["GET /actions", () => list(undefined)],
      ["POST /actions", () => post(undefined, validBody())],
      ["POST /actions with an invalid body", () => post(undefined, { name: "Bad" })],
      ["GET /actions/{id}", () => getOne(undefined, created.id)],
      ["PATCH /actions/{id}", () => patch(undefined, created.id, { title: "x" })],
      ["DELETE /actions/{id}", () => remove(undefined, created.id)],
    ])("%s without a key answers 401", async (_case, request) => {
      await expectMissingCredential(await request());
    });

    it("leaves the action as it was after the refused calls", async () => {
      const { secret: _, ...shown } = created;
      expect(await json(await getOne(apiKey, created.id))).toEqual({ ...shown, calls: [] });
    });

    it("answers 403 on a plan without the API, and stores nothing", async () => {
      const free = await createBusiness({ plan: "free" });
      await expect(await list(free.apiKey)).toHaveStatus(403);
      await expect(await post(free.apiKey, validBody())).toHaveStatus(403);
      const lapsed = await createBusiness({ plan: "pro", active: false });
      await expect(await post(lapsed.apiKey, validBody())).toHaveStatus(403);
      expect(await rowsOfBusiness(free.business.id)).toEqual([]);
      expect(await rowsOfBusiness(lapsed.business.id)).toEqual([]);
    });
  });
});

describe("the owner's functions: switchAction and actionsForSecretary", async () => {
  const { business, apiKey } = await createBusiness();
  const other = await createBusiness();

  it("switchAction on and off is reflected in GET", async () => {
    const created = await create(apiKey);
    const on = await switchAction(deps, business.id, created.id, true);
    expect(on).toMatchObject({ id: created.id, enabled: true });
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).enabled).toBe(true);
    expect((await json<{ data: Action[] }>(await list(apiKey))).data.find((a) => a.id === created.id)?.enabled).toBe(
      true,
    );
    await switchAction(deps, business.id, created.id, false);
    expect((await json<WithCalls>(await getOne(apiKey, created.id))).enabled).toBe(false);
  });

  it("switchAction refuses another business's action with 404 and leaves it off", async () => {
    const theirs = await create(other.apiKey);
    await expect(switchAction(deps, business.id, theirs.id, true)).rejects.toMatchObject({
      status: 404,
      message: NOT_FOUND,
    });
    expect((await rowOf(theirs.id))?.enabled).toBe(false);
  });

  it("switchAction on is one guarded write: a PATCH landing between its read and its write is not switched on", async () => {
    const created = await rowOf((await create(apiKey)).id);
    if (!created) throw new Error("not stored");
    const description = "Checks free slots on a day, in every one of the business's shops.";
    let landed = false;
    /** The PATCH lands just before the switch's write runs, after the switch has read the action. */
    const patchFirst = async () => {
      if (landed) return;
      landed = true;
      await expect(await patch(apiKey, created.id, { description })).toHaveStatus(200);
    };
    await expect(
      switchAction(testDependencies(DEFAULT_SHARD, { db: writingAfter(patchFirst) }), business.id, created.id, true, {
        reviewed: reviewedVersion(created),
      }),
    ).rejects.toMatchObject({
      status: 409,
      message: "The action has changed since it was reviewed: review it again before switching it on.",
    });
    expect(landed).toBe(true);
    expect(await rowOf(created.id)).toMatchObject({ description, enabled: false });
  });

  it("actionsForSecretary lists only enabled actions as { name, description, parameters }, sorted by name", async () => {
    const fresh = await createBusiness();
    const zeta = await create(fresh.apiKey, { name: "zeta_lookup", description: "z".repeat(20) });
    const alpha = await create(fresh.apiKey, { name: "alpha_lookup", description: "a".repeat(20) });
    const mid = await create(fresh.apiKey, { name: "mid_lookup", parameters: undefined });
    await create(fresh.apiKey, { name: "beta_switched_off" });
    expect(await actionsForSecretary(await enabledActions(deps.db, fresh.business.id), "whatsapp")).toEqual([]);

    for (const action of [zeta, mid, alpha]) await switchAction(deps, fresh.business.id, action.id, true);
    // Another business's enabled action never appears.
    const theirs = await create(other.apiKey, { name: "alpha_lookup" });
    await switchAction(deps, other.business.id, theirs.id, true);

    const expected = [
      { name: "alpha_lookup", description: "a".repeat(20), parameters: PARAMETERS },
      { name: "mid_lookup", description: DESCRIPTION, parameters: NO_PARAMETERS },
      { name: "zeta_lookup", description: "z".repeat(20), parameters: PARAMETERS },
    ];
    for (const channel of CHAT_CHANNELS) {
      const offered = await actionsForSecretary(await enabledActions(deps.db, fresh.business.id), channel);
      expect(offered).toEqual(expected);
      for (const action of offered) expect(Object.keys(action).sort()).toEqual(["description", "name", "parameters"]);
    }
    expect(await actionsForSecretary(await enabledActions(deps.db, fresh.business.id), "phone")).toEqual([]);

    await switchAction(deps, fresh.business.id, mid.id, false);
    expect(
      (await actionsForSecretary(await enabledActions(deps.db, fresh.business.id), "sms")).map((a) => a.name),
    ).toEqual(["alpha_lookup", "zeta_lookup"]);
    expect(await actionsForSecretary(await enabledActions(deps.db, other.business.id), "sms")).toEqual([
      { name: "alpha_lookup", description: DESCRIPTION, parameters: PARAMETERS },
    ]);
  });
});

function callRow(actionId: number, businessId: string, n: number) {
  return {
    actionId,
    businessId,
    conversationId: "conv-1",
    messageId: `msg-${n}`,
    channel: "whatsapp",
    status: "success" as const,
    arguments: { n },
    httpStatus: 200,
    error: null,
    durationMs: 42,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
  };
}

/**
 * The database as the code under test sees it, except that `before` runs (once) before the batch that carries the
 * first UPDATE is sent (a switch is written in one batch with its event): a deterministic stand-in for a request that
 * lands between a read and the write that follows.
 */
function writingAfter(before: () => Promise<void>): typeof db {
  let landing: Promise<void> | undefined;
  const d1 = new Proxy(shardD1, {
    get(target, key) {
      if (key === "prepare") {
        return (query: string) => {
          if (/^update /.test(query)) landing ??= before();
          return target.prepare(query);
        };
      }
      if (key === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          await landing;
          return target.batch(statements);
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return shardDatabase(d1);
}
