import { env } from "cloudflare:test";
import { eq, getTableName, is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { MOVING_RETRY_AFTER_SECONDS } from "../../src/domain/access/runtime-shard";
import { moveBusiness } from "../../src/domain/operations/business-move";
import { BUSINESS_ROWS } from "../../src/domain/operations/business-rows";
import { STEP_STATEMENTS } from "../../src/domain/operations/move-step";
import type { BusinessMoveAnswer } from "../../src/schemas/runtime";
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
import { createBusiness, shardDb } from "../helpers/fixtures";
import { call, expectError, json, RUNTIME } from "../helpers/http";
import { browse, createOwnerBusiness } from "../helpers/oauth";
import { expectServerErrors } from "../helpers/server-errors";
import { failingBatches } from "../helpers/shards";

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
  expect(response.status).toBe(503);
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

describe("a business while a move of it is under way", async () => {
  const owner = await createOwnerBusiness({ shard: "legacy" });
  const { business, apiKey } = owner;
  const jar = await signedIn(owner);
  // A step of 12 statements marks the business, copies its row and stops at the next table.
  const step = await moveBusiness(deps, business.id, "us1", 12);

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
    expect((await call("/api/v1/actions", { key: apiKey })).status).toBe(200);
    expect((await call("/api/v1/me", { key: apiKey })).status).toBe(200);
  });

  it("refuses the owner's forms with 503 and Retry-After, and shows the pages", async () => {
    const refused = await submit(jar, "/dashboard/keys", "/dashboard/keys", { label: "While moving" });
    await expectMoving(refused.clone());
    expect(await refused.text()).toContain(MOVING);
    expect((await browse(jar, "/dashboard")).status).toBe(200);
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
    expect(context.status).toBe(200);
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
    expect(created.status).toBe(201);
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
      "There is no shard named xx9: the shards are legacy, eu1, us1.",
    );
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

describe("a move of a business with 3,000 bookings", async () => {
  const { business } = await businessWithBookings(3_000);
  const before = await rowsIn("legacy", business.id);
  const steps: { status: number; answer: BusinessMoveAnswer; statements: number }[] = [];
  for (let last = 202; last === 202 && steps.length < 50; ) {
    const { bindings, trips } = countingShards(env);
    const response = await move(business.id, "eu1", OPERATOR, bindings);
    last = response.status;
    steps.push({ status: last, answer: await json<BusinessMoveAnswer>(response), statements: statementsOf(trips) });
  }

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

describe("a move whose target fails in the middle of the copy", async () => {
  const { business, apiKey } = await businessWithBookings(1_200);
  const before = await rowsIn("legacy", business.id);
  const first = await move(business.id, "eu1");

  it("answers 500, and the next step goes on from where the last recorded one got, to every row once", async () => {
    expect(await json(first)).toMatchObject({ status: "copying", table: "bookings" });
    expectServerErrors();
    const failing = { SHARD_EU1: failingBatches(env.SHARD_EU1, 2) };
    expect((await move(business.id, "eu1", OPERATOR, failing)).status).toBe(500);
    const rows = Object.values(before).reduce((sum, table) => sum + table.length, 0);
    expect(await moved(business.id, "eu1")).toMatchObject({ status: "moved", rows_copied: rows });
    expect(await rowsIn("eu1", business.id)).toEqual(before);
    await expectNoRowsIn("legacy", business.id);
    expect((await call("/api/v1/me", { key: apiKey })).status).toBe(200);
  });
});

describe("a move run again after its switch, before its deletion ended", async () => {
  const { business, apiKey } = await createOwnerBusiness({ shard: "legacy" });
  // Steps of 16 statements: the one that switches deletes the credentials in legacy, and has none left for the rest.
  const switched = await stepsUntil(business.id, "us1", 16, "deleting");

  it("has the business in its new shard, its credentials forwarded there, and refuses moving it back", async () => {
    expect(switched).toMatchObject({ from: "legacy", to: "us1", status: "deleting" });
    expect(await directoryRowOf(business.id)).toMatchObject({ shard: "us1", movingSince: null });
    expect((await rowsIn("legacy", business.id)).businesses).toHaveLength(1);
    expect((await call("/api/v1/actions", { key: apiKey, method: "POST", body: actionBody("switched") })).status).toBe(
      201,
    );
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

describe("a move undone by moving the business to the shard it is in", async () => {
  const { business, apiKey } = await businessWithBookings(1_000);
  const before = await rowsIn("legacy", business.id);
  const started = await move(business.id, "eu1");

  it("deletes the copies from the target, clears the mark and answers 200", async () => {
    expect(started.status).toBe(202);
    expect((await rowsIn("eu1", business.id)).bookings?.length).toBeGreaterThan(0);
    expect(await moved(business.id, "legacy")).toMatchObject({ from: "legacy", to: "eu1", status: "undone" });
    await expectNoRowsIn("eu1", business.id);
    expect(await rowsIn("legacy", business.id)).toEqual(before);
    expect(await directoryRowOf(business.id)).toMatchObject({ shard: "legacy", movingSince: null });
  });

  it("leaves the business taking writes in its shard, and free to move again", async () => {
    const created = await call("/api/v1/actions", { key: apiKey, method: "POST", body: actionBody("after_undo") });
    expect(created.status).toBe(201);
    expect(await moved(business.id, "eu1")).toMatchObject({ status: "moved", tables: { bookings: 1_000 } });
  });
});

describe("the tables a move copies", () => {
  it("are every table of the schema but the global ones", () => {
    const tables = Object.values(schema).filter((value) => is(value, SQLiteTable));
    const copied = new Set(BUSINESS_ROWS.map((rows) => rows.table));
    const notCopied = tables.filter((table) => !copied.has(table)).map((table) => getTableName(table));
    expect(notCopied.sort()).toEqual(["business_moves", "business_shards", "credential_forwards", "owner_emails"]);
  });
});
