import { env } from "cloudflare:test";
import { eq, getTableName, inArray, is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import { insertMany, runBatch } from "../../src/db/batches";
import * as schema from "../../src/db/schema";
import { MOVING_RETRY_AFTER_SECONDS } from "../../src/domain/access/business-moving";
import { moveBusiness } from "../../src/domain/operations/business-move";
import { BUSINESS_ROWS } from "../../src/domain/operations/business-rows";
import { STEP_STATEMENTS } from "../../src/domain/operations/move-step";
import { sha256Hex } from "../../src/lib/secrets";
import type { BusinessMoveAnswer } from "../../src/schemas/runtime";
import { registerAction } from "../helpers/actions";
import {
  businessWithBookings,
  directoryRowOf,
  expectNoRowsIn,
  move,
  moved,
  OPERATOR,
  rowsIn,
} from "../helpers/business-move";
import { countingShards } from "../helpers/counting-d1";
import { signedIn, submit } from "../helpers/dashboard";
import { deps } from "../helpers/dependencies";
import { createBusiness, legacyDb, shardDb } from "../helpers/fixtures";
import { call, expectError, json, RUNTIME } from "../helpers/http";
import { createIntake } from "../helpers/intakes";
import { keepingQueue } from "../helpers/keeping-queue";
import { browse, connectApp, createOwnerBusiness } from "../helpers/oauth";
import { bookingObject, reportChange } from "../helpers/platform";
import { expectServerErrors } from "../helpers/server-errors";
import { failingBatches } from "../helpers/shards";
import { subscribe } from "../helpers/webhooks";

// A move's steps (docs/scaling.md, Moving a business between shards): its mark and the refusals while it is under
// way, its credential, its steps within their budget, a step run again after a failure or after the switch, and an
// undo.

const MOVING = `The business is being moved to another database, and its data cannot change until the move ends: retry in ${MOVING_RETRY_AFTER_SECONDS} seconds.`;

const actionBody = (name: string) => ({
  name,
  title: "Stock",
  description: "Tells whether a product is in stock today.",
  url: "https://partner.example/stock",
});

/** A 503 of the move's mark, which the test expects of the Worker (test/helpers/server-errors.ts). */
async function expectMoving(response: Response) {
  expectServerErrors();
  expect(response.headers.get("Retry-After")).toBe(String(MOVING_RETRY_AFTER_SECONDS));
  await expect(response).toHaveStatus(503);
}

/**
 * The D1 statements a request ran, each counted whether alone or in a batch (src/domain/operations/move-step.ts,
 * STEP_STATEMENTS), from the counting bindings' trips.
 */
const statementsOf = (trips: string[]) =>
  trips.reduce((sum, trip) => sum + Number(/^batch of (\d+)$/.exec(trip)?.[1] ?? 1), 0);

/** Runs the move's steps through the domain with a budget of `statements`, until it reaches `status`. */
async function stepsUntil(businessId: string, to: string, statements: number, status: BusinessMoveAnswer["status"]) {
  for (let step = 0; step < 200; step++) {
    const answer = await moveBusiness(deps, businessId, to, statements);
    if (answer.status === status) return answer;
  }
  throw new Error(`The move of ${businessId} never reached ${status}.`);
}

describe("a business while a move of it is under way", { timeout: 60_000 }, async () => {
  const owner = await createOwnerBusiness({ shard: "legacy" });
  const { business, apiKey } = owner;
  const jar = await signedIn(owner);
  // A step of 13 statements marks the business, finds no delivery being sent, copies its row and stops at the next
  // table.
  const step = await moveBusiness(deps, business.id, "us1", 13);

  it("is marked, and the step answers how far the copy got", async () => {
    expect(step).toEqual({
      business_id: business.id,
      from: "legacy",
      to: "us1",
      status: "copying",
      table: "owners",
      rows_copied: 1,
    });
    expect(await directoryRowOf(business.id)).toMatchObject({ shard: "legacy", movingSince: expect.any(String) });
  });

  it("refuses partner writes with 503 and Retry-After, and answers reads", async () => {
    const refused = await call("/api/v1/actions", { key: apiKey, method: "POST", body: actionBody("while_moving") });
    await expectMoving(refused.clone());
    await expectError(refused, 503, MOVING);
    await expect(await call("/api/v1/actions", { key: apiKey })).toHaveStatus(200);
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(200);
  });

  it("refuses the owner's forms with 503 and Retry-After, and shows the pages", async () => {
    const refused = await submit(jar, "/dashboard/keys", "/dashboard/keys", { label: "While moving" });
    await expectMoving(refused.clone());
    expect(await refused.text()).toContain(MOVING);
    await expect(await browse(jar, "/dashboard")).toHaveStatus(200);
  });

  it("refuses runtime writes with 503 and Retry-After, and answers reads", async () => {
    const refused = await call(`/internal/v1/businesses/${business.id}/plan`, {
      method: "PUT",
      headers: RUNTIME,
      body: { plan: "business", active: true },
    });
    await expectMoving(refused.clone());
    await expectError(refused, 503, MOVING);
    const context = await call(`/internal/v1/businesses/${business.id}/context?channel=whatsapp`, { headers: RUNTIME });
    await expect(context).toHaveStatus(200);
  });

  it("refuses a move to another target with a 409 naming the move under way", async () => {
    await expectError(
      await move(business.id, "eu1"),
      409,
      /^A move of this business from legacy to us1 is under way \(started \d{4}-\d\d-\d\dT[\d:.]+Z\): send \{ "to": "us1" \} to go on with it, or \{ "to": "legacy" \} to undo it\.$/,
      { code: "move_in_progress" },
    );
  });

  it("takes writes again once the move ends, in the new shard", async () => {
    expect(await moved(business.id, "us1")).toMatchObject({ from: "legacy", to: "us1", status: "moved" });
    const created = await call("/api/v1/actions", { key: apiKey, method: "POST", body: actionBody("after_moving") });
    await expect(created).toHaveStatus(201);
    const [row] = await shardDb("us1").select().from(schema.businesses).where(eq(schema.businesses.id, business.id));
    expect(row?.movingSince).toBeNull();
  });
});

describe("the move's refusals", async () => {
  const { business } = await createBusiness({ shard: "eu1" });

  it("refuses the shard the business is in with 400", async () => {
    await expectError(await move(business.id, "eu1"), 400, "The business is already in shard eu1.");
  });

  it("refuses a shard that does not exist with 400", async () => {
    await expectError(
      await move(business.id, "xx9"),
      400,
      "There is no shard named xx9: the shards are legacy, eu1, us1, sandbox.",
    );
  });

  it("refuses to move a live business into the sandbox database, or a sandbox out of it, with 400", async () => {
    const sandbox = await createBusiness({ sandbox: true });
    const refusal =
      "Sandbox businesses stay in the sandbox database, and live businesses never enter it: move within each.";
    await expectError(await move(business.id, "sandbox"), 400, refusal, { param: "to" });
    await expectError(await move(sandbox.business.id, "eu1"), 400, refusal, { param: "to" });
    const started = await legacyDb.$count(
      schema.businessMoves,
      inArray(schema.businessMoves.businessId, [business.id, sandbox.business.id]),
    );
    expect(started).toBe(0);
  });

  it("answers 404 for an unknown business", async () => {
    await expectError(await move(crypto.randomUUID(), "us1"), 404, "No business has that id.");
  });

  it("answers 401 without the operator token, or with the runtime's, and moves nothing", async () => {
    const refusal = "The operator token is missing or not valid.";
    await expectError(await move(business.id, "us1", {}), 401, refusal, { code: "authentication_required" });
    await expectError(await move(business.id, "us1", RUNTIME), 401, refusal, { code: "invalid_credential" });
    expect((await rowsIn("eu1", business.id)).businesses).toHaveLength(1);
    expect(await directoryRowOf(business.id)).toMatchObject({ shard: "eu1", movingSince: null });
  });

  it("takes the operator token before it while the token is rotated", async () => {
    const rotation = {
      OPERATOR_TOKEN: "operator-token-new-0123456789abcdef",
      OPERATOR_TOKEN_PREVIOUS: env.OPERATOR_TOKEN,
    };
    await expectError(await move(business.id, "eu1", OPERATOR, rotation), 400, "The business is already in shard eu1.");
  });

  it("refuses the operator token on the runtime's routes", async () => {
    const context = await call(`/internal/v1/businesses/${business.id}/context?channel=whatsapp`, {
      headers: OPERATOR,
    });
    await expectError(context, 401, "The runtime token is missing or not valid.", { code: "invalid_credential" });
  });
});

/** The steps of a move, each with its status, its answer and the D1 statements it ran, until one is not a 202. */
async function countedSteps(businessId: string, to: string) {
  const steps: { status: number; answer: BusinessMoveAnswer; statements: number }[] = [];
  for (let last = 202; last === 202 && steps.length < 50; ) {
    const { bindings, trips } = countingShards(env);
    const response = await move(businessId, to, OPERATOR, bindings);
    last = response.status;
    steps.push({ status: last, answer: await json<BusinessMoveAnswer>(response), statements: statementsOf(trips) });
  }
  return steps;
}

describe("a move of a business with 3,000 bookings", { timeout: 60_000 }, async () => {
  const { business } = await businessWithBookings(3_000);
  const before = await rowsIn("legacy", business.id);
  const steps = await countedSteps(business.id, "eu1");

  it("takes several steps, each of at most STEP_STATEMENTS statements, through copying and verifying", () => {
    expect(steps.length).toBeGreaterThan(3);
    for (const step of steps) expect(step.statements).toBeLessThanOrEqual(STEP_STATEMENTS);
    expect(steps.slice(0, -1).map((step) => step.status)).toEqual(steps.slice(0, -1).map(() => 202));
    const statuses = new Set(steps.slice(0, -1).map((step) => step.answer.status));
    expect([...statuses]).toEqual(expect.arrayContaining(["copying"]));
    for (const status of statuses) expect(["copying", "verifying", "deleting"]).toContain(status);
  });

  it("ends with 200, every row in the new shard with its id, and none in the old", async () => {
    const last = steps.at(-1);
    expect(last?.status).toBe(200);
    const rows = Object.values(before).reduce((sum, table) => sum + table.length, 0);
    expect(last?.answer).toMatchObject({ status: "moved", rows_copied: rows, tables: { bookings: 3_000 } });
    expect(await rowsIn("eu1", business.id)).toEqual(before);
    await expectNoRowsIn("legacy", business.id);
  });
});

/** What a partner reads of the business with `credential`: how many of each, every page of the appointments read. */
async function partnerCounts(credential: string, intakeIds: number[]) {
  const listed = async (path: string) => {
    const response = await call(`/api/v1${path}`, { key: credential });
    await expect(response, path).toHaveStatus(200);
    return json<{ data: { id: number }[]; has_more?: boolean }>(response);
  };
  let appointments = 0;
  for (let after = "", more = true; more; ) {
    const page = await listed(`/appointments?limit=100${after}`);
    appointments += page.data.length;
    more = page.has_more === true;
    after = `&starting_after=${page.data.at(-1)?.id}`;
  }
  const responses = [];
  for (const id of intakeIds) responses.push((await listed(`/intakes/${id}/responses`)).data.length);
  return {
    endpoints: (await listed("/webhooks")).data.length,
    actions: (await listed("/actions")).data.length,
    intakes: (await listed("/intakes")).data.length,
    responses,
    appointments,
  };
}

describe("a move at the maxima: 20 endpoints, 10 actions, 5 intakes with responses, 2,005 bookings", {
  timeout: 60_000,
}, async () => {
  const owner = await businessWithBookings(2_000);
  const { business, apiKey } = owner;
  const app = await connectApp(owner);
  for (let n = 0; n < 20; n++) await subscribe(apiKey, `https://partner.example/maxima/${n}`);
  for (let n = 0; n < 10; n++) await registerAction(apiKey, `maxima_${n}`);
  const intakes = [];
  for (let n = 0; n < 5; n++) intakes.push(await createIntake(apiKey));
  const now = new Date().toISOString();
  const responses = intakes.flatMap((intake) =>
    Array.from({ length: 20 }, (_, i) => ({
      intakeId: intake.id,
      businessId: business.id,
      conversationId: `conv-maxima-${i}`,
      channel: "whatsapp" as const,
      runId: `run-${crypto.randomUUID()}`,
      answers: [{ id: "full_name", label: "What is your name?", type: "text" as const, value: `Customer ${i}` }],
      status: "completed" as const,
      completedAt: now,
      createdAt: now,
    })),
  );
  await runBatch(legacyDb, insertMany(legacyDb, schema.intakeResponses, responses));
  // Five reports, each delivered to the 20 endpoints: 100 deliveries wait on a queue that sends nothing as the move
  // begins, and the new shard's sweep is to send them.
  for (let n = 0; n < 5; n++) {
    const report = await reportChange(
      business.id,
      { booking: bookingObject(930_000_000 + n) },
      {
        WEBHOOK_DELIVERIES: keepingQueue,
      },
    );
    await expect(report).toHaveStatus(201);
  }
  const intakeIds = intakes.map((intake) => intake.id);
  const counts = { endpoints: 20, actions: 10, intakes: 5, responses: [20, 20, 20, 20, 20], appointments: 2_005 };
  const credentials = [apiKey, app.tokens.access_token, app.tokens.refresh_token];

  it("reads as much before it moves", async () => {
    expect(await partnerCounts(apiKey, intakeIds)).toEqual(counts);
    expect((await rowsIn("legacy", business.id)).webhook_deliveries).toHaveLength(100);
  });

  it.each([
    ["legacy", "us1"],
    ["us1", "eu1"],
  ] as const)(
    "moves from %s to %s in steps within the budget, with every row and nothing left behind",
    async (from, to) => {
      const before = await rowsIn(from, business.id);
      const steps = await countedSteps(business.id, to);
      expect(steps.length).toBeGreaterThan(3);
      for (const step of steps) expect(step.statements).toBeLessThanOrEqual(STEP_STATEMENTS);
      expect(steps.map((step) => step.status)).toEqual([...steps.slice(1).map(() => 202), 200]);
      const rows = Object.values(before).reduce((sum, table) => sum + table.length, 0);
      expect(steps.at(-1)?.answer).toMatchObject({ from, to, status: "moved", rows_copied: rows });
      // The pending deliveries arrive unenqueued, for the new shard's sweep; every other row as it was.
      const unenqueued = before.webhook_deliveries?.map((row) => ({ ...(row as object), enqueuedAt: null }));
      expect(await rowsIn(to, business.id)).toEqual({ ...before, webhook_deliveries: unenqueued });
      await expectNoRowsIn(from, business.id);
      const forwards = await shardDb(from)
        .select({ shard: schema.credentialForwards.shard })
        .from(schema.credentialForwards)
        .where(inArray(schema.credentialForwards.credentialHash, credentials.map(sha256Hex)));
      expect(forwards).toEqual(credentials.map(() => ({ shard: to })));
      expect(await partnerCounts(apiKey, intakeIds)).toEqual(counts);
      expect(await partnerCounts(app.tokens.access_token, [])).toMatchObject({ endpoints: 0, appointments: 2_005 });
    },
  );
});

describe("a move whose target fails in the middle of the copy", { timeout: 60_000 }, async () => {
  const { business, apiKey } = await businessWithBookings(1_200);
  const before = await rowsIn("legacy", business.id);
  const first = await move(business.id, "eu1");

  it("answers 500, and the next step goes on from where the last recorded one got, to every row once", async () => {
    expect(await json(first)).toMatchObject({ status: "copying", table: "bookings" });
    expectServerErrors();
    const failing = { SHARD_EU1: failingBatches(env.SHARD_EU1, 2) };
    await expect(await move(business.id, "eu1", OPERATOR, failing)).toHaveStatus(500);
    const rows = Object.values(before).reduce((sum, table) => sum + table.length, 0);
    expect(await moved(business.id, "eu1")).toMatchObject({ status: "moved", rows_copied: rows });
    expect(await rowsIn("eu1", business.id)).toEqual(before);
    await expectNoRowsIn("legacy", business.id);
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(200);
  });
});

describe("a move run again after its switch, before its deletion ended", { timeout: 60_000 }, async () => {
  const { business, apiKey } = await createOwnerBusiness({ shard: "legacy" });
  // Steps of 18 statements: the one that switches clears the copy's mark, sends the deliveries it owes and deletes the
  // credentials in legacy, and has none left for the rest.
  const switched = await stepsUntil(business.id, "us1", 18, "deleting");

  it("has the business in its new shard, its credentials forwarded there, and refuses moving it back", async () => {
    expect(switched).toMatchObject({ from: "legacy", to: "us1", status: "deleting" });
    expect(await directoryRowOf(business.id)).toMatchObject({ shard: "us1", movingSince: null });
    expect((await rowsIn("legacy", business.id)).businesses).toHaveLength(1);
    await expect(
      await call("/api/v1/actions", { key: apiKey, method: "POST", body: actionBody("switched") }),
    ).toHaveStatus(201);
    await expectError(
      await move(business.id, "legacy"),
      409,
      /: it is in us1 now, and \{ "to": "us1" \} finishes deleting its rows from legacy\.$/,
      { code: "move_in_progress" },
    );
  });

  it("finishes the deletion when run again to the same shard", async () => {
    expect(await moved(business.id, "us1")).toMatchObject({ from: "legacy", to: "us1", status: "moved" });
    await expectNoRowsIn("legacy", business.id);
    expect((await rowsIn("us1", business.id)).actions).toHaveLength(1);
    await expectError(await move(business.id, "us1"), 400, "The business is already in shard us1.");
  });
});

describe("a move undone by moving the business to the shard it is in", { timeout: 60_000 }, async () => {
  const { business, apiKey } = await businessWithBookings(1_000);
  const before = await rowsIn("legacy", business.id);
  const started = await move(business.id, "eu1");

  it("deletes the copies from the target, clears the mark and answers 200", async () => {
    await expect(started).toHaveStatus(202);
    expect((await rowsIn("eu1", business.id)).bookings?.length).toBeGreaterThan(0);
    expect(await moved(business.id, "legacy")).toMatchObject({ from: "legacy", to: "eu1", status: "undone" });
    await expectNoRowsIn("eu1", business.id);
    expect(await rowsIn("legacy", business.id)).toEqual(before);
    expect(await directoryRowOf(business.id)).toMatchObject({ shard: "legacy", movingSince: null });
  });

  it("leaves the business taking writes in its shard, and free to move again", async () => {
    const created = await call("/api/v1/actions", { key: apiKey, method: "POST", body: actionBody("after_undo") });
    await expect(created).toHaveStatus(201);
    expect(await moved(business.id, "eu1")).toMatchObject({ status: "moved", tables: { bookings: 1_000 } });
  });
});

describe("the tables a move copies", () => {
  it("are every table of the schema but the global ones", () => {
    const tables = Object.values(schema).filter((value) => is(value, SQLiteTable));
    const copied = new Set(BUSINESS_ROWS.map((rows) => rows.table));
    const notCopied = tables.filter((table) => !copied.has(table)).map((table) => getTableName(table));
    // An app's own tokens and endpoints name no business: they stay in the global database (docs/oauth.md, The app
    // as itself).
    expect(notCopied.sort()).toEqual([
      "app_endpoints",
      "app_tokens",
      "business_moves",
      "business_shards",
      "credential_forwards",
      "owner_emails",
    ]);
  });
});

/**
 * A database whose statements matching `pattern` fail (a crash between two steps of a move); its others, and its
 * batches, reach the real one.
 */
function failingStatements(real: D1Database, pattern: RegExp): D1Database {
  return new Proxy(real, {
    get(target, key) {
      if (key === "prepare") {
        return (query: string) => {
          if (pattern.test(query)) throw new Error("injected fault: the statement never ran");
          return target.prepare(query);
        };
      }
      const value = Reflect.get(target, key);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("a move that fails after its switch, before the new shard's copy loses its mark", {
  timeout: 60_000,
}, async () => {
  const { business, apiKey } = await createBusiness({ shard: "legacy" });
  const failing = { SHARD_US1: failingStatements(env.SHARD_US1, /^update "businesses" set "moving_since"/) };
  expectServerErrors();
  let failed = await move(business.id, "us1", OPERATOR, failing);
  while (failed.status === 202) failed = await move(business.id, "us1", OPERATOR, failing);

  it("has switched: the directory names us1, whose copy is still marked, so writes wait with 503", async () => {
    await expect(failed).toHaveStatus(500);
    expect(await directoryRowOf(business.id)).toMatchObject({ shard: "us1", movingSince: null });
    const [copy] = await shardDb("us1").select().from(schema.businesses).where(eq(schema.businesses.id, business.id));
    expect(copy?.movingSince).toEqual(expect.any(String));
    expectServerErrors();
    await expectError(
      await call("/api/v1/actions", { key: apiKey, method: "POST", body: actionBody("while_marked") }),
      503,
      MOVING,
    );
    const report = await reportChange(business.id, { booking: bookingObject(5100) });
    await expectError(report, 503, MOVING);
  });

  it("loses the mark at the next step, which finishes the move: writes land in us1", async () => {
    expect(await moved(business.id, "us1")).toMatchObject({ from: "legacy", to: "us1", status: "moved" });
    const [copy] = await shardDb("us1").select().from(schema.businesses).where(eq(schema.businesses.id, business.id));
    expect(copy?.movingSince).toBeNull();
    await expect(
      await call("/api/v1/actions", { key: apiKey, method: "POST", body: actionBody("after_mark") }),
    ).toHaveStatus(201);
    await expect(await reportChange(business.id, { booking: bookingObject(5101) })).toHaveStatus(201);
  });
});
