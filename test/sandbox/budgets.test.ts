import { eq, getTableName } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { businessShards } from "../../src/db/schema";
import { SANDBOX_SHARD, SHARD_NAMES } from "../../src/db/shards";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { BUSINESS_ROWS } from "../../src/domain/operations/business-rows";
import { SANDBOX_ACTION_CALLS_PER_HOUR, SANDBOX_EVENTS_PER_HOUR } from "../../src/domain/sandbox/budgets";
import { SANDBOX_SENDS_PER_HOUR } from "../../src/domain/webhooks/endpoint-budgets";
import { registerAction } from "../helpers/actions";
import { HOUR } from "../helpers/deliveries-api";
import { testDependencies } from "../helpers/dependencies";
import { createBusiness, globalDb, shardDb } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { createIntake } from "../helpers/intakes";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";
import { receiverBox } from "../helpers/receiver";
import { subscribe } from "../helpers/webhooks";

// docs/guides/sandbox.md, Budgets: what one sandbox business may cause an hour, each budget used up to its limit and
// refused past it with 429 and Retry-After; and its rows, wherever they come from, only in the sandbox database.

const owner = testDependencies(SANDBOX_SHARD);
const ANSWERS = { full_name: "Noor", email: "noor@example.com" };

const post = (key: string, path: string, body: unknown = {}) => call(`/api/v1${path}`, { key, method: "POST", body });

/** The 429 of a spent hourly budget: until the hour is up, with the policy's RateLimit fields. */
async function expectSpent(response: Response, policy: string, sentence: RegExp) {
  const retryAfter = Number(response.headers.get("Retry-After"));
  const secondsLeftInHour = Math.ceil((HOUR - (Date.now() % HOUR)) / 1000);
  expect(Math.abs(retryAfter - secondsLeftInHour)).toBeLessThanOrEqual(2);
  expect(response.headers.get("RateLimit")).toBe(`"${policy}";r=0;t=${retryAfter}`);
  await expectError(response, 429, sentence, { code: "rate_limited" });
}

/** Sends `count` requests one after the other; answers their statuses. */
async function statuses(count: number, send: () => Promise<Response>) {
  const answered: number[] = [];
  for (let i = 0; i < count; i++) answered.push((await send()).status);
  return answered;
}

describe("a sandbox business's hourly budgets", () => {
  it(`causes ${SANDBOX_EVENTS_PER_HOUR} events an hour, intake conversations among them, then 429`, {
    timeout: 30_000,
  }, async () => {
    await awayFromWindowEdge(20_000, HOUR);
    const { business, apiKey } = await createBusiness({ sandbox: true });
    const intake = await createIntake(apiKey);
    await switchIntakeOn(owner, business.id, intake.id);
    const conversations = await statuses(5, () =>
      post(apiKey, `/sandbox/intakes/${intake.id}/conversations`, { answers: ANSWERS }),
    );
    expect(conversations).toEqual(Array(5).fill(201));
    const events = await statuses(SANDBOX_EVENTS_PER_HOUR - 5, () =>
      post(apiKey, "/sandbox/events", { event: "order.created" }),
    );
    expect(events).toEqual(Array(SANDBOX_EVENTS_PER_HOUR - 5).fill(201));
    await expectSpent(
      await post(apiKey, "/sandbox/events", { event: "order.created" }),
      "sandbox_events",
      new RegExp(`at most ${SANDBOX_EVENTS_PER_HOUR} events an hour`),
    );
    const conversation = await post(apiKey, `/sandbox/intakes/${intake.id}/conversations`, { answers: ANSWERS });
    await expectSpent(conversation, "sandbox_events", /sandbox events and intake conversations together/);
    // Another sandbox's budget is its own.
    const other = await createBusiness({ sandbox: true });
    await expect(await post(other.apiKey, "/sandbox/events", { event: "order.created" })).toHaveStatus(201);
  });

  it(`calls its actions ${SANDBOX_ACTION_CALLS_PER_HOUR} times an hour, then 429, and a mistyped id spends nothing`, {
    timeout: 30_000,
  }, async () => {
    await awayFromWindowEdge(20_000, HOUR);
    const { business, apiKey } = await createBusiness({ sandbox: true });
    const box = receiverBox("sandbox-budget");
    const action = await registerAction(apiKey, "check_stock", {
      url: box.url("/ok"),
      parameters: { type: "object", properties: { sku: { type: "string", description: "The code" } } },
    });
    await switchAction(owner, business.id, action.id, true);
    const callIt = (id: number) => post(apiKey, `/sandbox/actions/${id}/calls`, { arguments: { sku: "A1" } });
    await expect(await callIt(999_999_999)).toHaveStatus(404);
    expect(await statuses(SANDBOX_ACTION_CALLS_PER_HOUR, () => callIt(action.id))).toEqual(
      Array(SANDBOX_ACTION_CALLS_PER_HOUR).fill(200),
    );
    await expectSpent(
      await callIt(action.id),
      "sandbox_action_calls",
      new RegExp(`call its actions at most ${SANDBOX_ACTION_CALLS_PER_HOUR} times an hour`),
    );
    expect(await box.recorded()).toHaveLength(SANDBOX_ACTION_CALLS_PER_HOUR);
  });

  it(`is sent ${SANDBOX_SENDS_PER_HOUR} test events and redeliveries an hour across its endpoints, then 429`, {
    timeout: 30_000,
  }, async () => {
    await awayFromWindowEdge(20_000, HOUR);
    const { apiKey } = await createBusiness({ sandbox: true });
    const [first, second] = await Promise.all([
      subscribe(apiKey, "https://partner.example/one"),
      subscribe(apiKey, "https://partner.example/two"),
    ]);
    const test = (id: number) => post(apiKey, `/webhooks/${id}/test`);
    const half = SANDBOX_SENDS_PER_HOUR / 2;
    expect(await statuses(half, () => test(first?.id ?? 0))).toEqual(Array(half).fill(202));
    const listed = await json<{ data: Array<{ id: number }> }>(
      await call(`/api/v1/webhooks/${first?.id}/deliveries`, { key: apiKey }),
    );
    const redeliver = () => post(apiKey, `/webhooks/${first?.id}/deliveries/${listed.data[0]?.id}/redeliver`);
    expect(await statuses(half - 1, redeliver)).toEqual(Array(half - 1).fill(202));
    await expect(await test(second?.id ?? 0)).toHaveStatus(202);
    await expectSpent(
      await test(second?.id ?? 0),
      "sandbox_sends",
      new RegExp(`at most ${SANDBOX_SENDS_PER_HOUR} redeliveries and test events an hour`),
    );
    await expectSpent(await redeliver(), "sandbox_sends", /across its endpoints/);
  });
});

describe("a sandbox's rows", () => {
  it("never land in a live shard: made, used and read, every table holds them in the sandbox database only", {
    timeout: 30_000,
  }, async () => {
    const made = await json<{ business_id: string; api_key: string }>(
      await call("/api/sandbox/businesses", { method: "POST", body: { country: "NL" } }),
    );
    const key = made.api_key;
    const box = receiverBox("sandbox-rows");
    await subscribe(key, box.url("/hooks"), ["*", "intake.completed"]);
    const intake = await createIntake(key);
    await switchIntakeOn(owner, made.business_id, intake.id);
    const conversation = await post(key, `/sandbox/intakes/${intake.id}/conversations`, { answers: ANSWERS });
    await expect(conversation).toHaveStatus(201);
    await expect(await post(key, "/sandbox/events", { event: "booking.created" })).toHaveStatus(201);
    await box.arrived(2);

    const rowsIn = async (shard: (typeof SHARD_NAMES)[number]) => {
      const counts: Record<string, number> = {};
      for (const rows of BUSINESS_ROWS) {
        counts[getTableName(rows.table)] = await shardDb(shard).$count(rows.table, rows.of(made.business_id));
      }
      return counts;
    };
    const inSandbox = await rowsIn(SANDBOX_SHARD);
    for (const table of ["businesses", "owners", "api_keys", "bookings", "orders", "intakes", "events"]) {
      expect(inSandbox[table], table).toBeGreaterThan(0);
    }
    for (const shard of SHARD_NAMES.filter((name) => name !== SANDBOX_SHARD)) {
      expect(
        Object.values(await rowsIn(shard)).every((count) => count === 0),
        shard,
      ).toBe(true);
    }
    const [listed] = await globalDb
      .select()
      .from(businessShards)
      .where(eq(businessShards.businessId, made.business_id));
    expect(listed).toMatchObject({ shard: SANDBOX_SHARD, sandbox: true });
  });
});
