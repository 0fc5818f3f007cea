import { eq, getTableName, is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it } from "vitest";
import * as schema from "../../src/db/schema";
import { MOVING_RETRY_AFTER_SECONDS } from "../../src/domain/access/runtime-shard";
import { copyBusiness, markMoving } from "../../src/domain/operations/business-move";
import { BUSINESS_ROWS } from "../../src/domain/operations/business-rows";
import { move, moved, rowsIn } from "../helpers/business-move";
import { signedIn, submit } from "../helpers/dashboard";
import { deps } from "../helpers/dependencies";
import { createBusiness, db, shardDb } from "../helpers/fixtures";
import { call, expectError, RUNTIME } from "../helpers/http";
import { browse, createOwnerBusiness } from "../helpers/oauth";
import { expectServerErrors } from "../helpers/server-errors";

// The move's mark, its refusals and its errors, and a move run again after it failed between the copy and the switch
// (docs/scaling.md, Moving a business between shards).

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

describe("a business while it is marked as moving", async () => {
  const owner = await createOwnerBusiness();
  const { business, apiKey } = owner;
  const jar = await signedIn(owner);
  await markMoving(deps, business.id, "legacy");

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

  it("takes writes again once the move ends, in the new shard", async () => {
    expect(await moved(business.id, "us1")).toMatchObject({ from: "legacy", to: "us1" });
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

  it("answers 401 without the runtime token, and moves nothing", async () => {
    expect((await move(business.id, "us1", {})).status).toBe(401);
    expect((await rowsIn("eu1", business.id)).businesses).toHaveLength(1);
  });
});

describe("a move run again after it failed between the copy and the switch", async () => {
  const { business, apiKey } = await createOwnerBusiness();
  await call("/api/v1/actions", { key: apiKey, method: "POST", body: actionBody("before_failure") });
  const before = await rowsIn("legacy", business.id);
  // The first run: marked and copied, then stopped before the switch.
  await markMoving(deps, business.id, "legacy");
  await copyBusiness(deps, business.id, "legacy", "eu1");

  it("ends with every row once in the new shard, nothing copied twice", async () => {
    expect(await moved(business.id, "eu1")).toMatchObject({ from: "legacy", to: "eu1", rows_copied: 0 });
    expect(await rowsIn("eu1", business.id)).toEqual(before);
    for (const [table, rows] of Object.entries(await rowsIn("legacy", business.id))) expect(rows, table).toEqual([]);
    expect((await call("/api/v1/me", { key: apiKey })).status).toBe(200);
  });
});

describe("a move run again after it failed between the switch and the deletion", async () => {
  const { business } = await createOwnerBusiness();
  // The first run: marked, copied and switched, then stopped before deleting the old rows.
  await markMoving(deps, business.id, "legacy");
  await copyBusiness(deps, business.id, "legacy", "us1");
  await db
    .update(schema.businessShards)
    .set({ shard: "us1", movingSince: null })
    .where(eq(schema.businessShards.businessId, business.id));

  it("deletes the rows the first run left in the old shard", async () => {
    expect(await moved(business.id, "us1")).toEqual({
      business_id: business.id,
      from: "legacy",
      to: "us1",
      rows_copied: 0,
    });
    for (const [table, rows] of Object.entries(await rowsIn("legacy", business.id))) expect(rows, table).toEqual([]);
    expect((await rowsIn("us1", business.id)).api_keys).toHaveLength(1);
    await expectError(await move(business.id, "us1"), 400, "The business is already in shard us1.");
  });
});

describe("the tables a move copies", () => {
  it("are every table of the schema but the global ones", () => {
    const tables = Object.values(schema).filter((value) => is(value, SQLiteTable));
    const copied = new Set(BUSINESS_ROWS.map((rows) => rows.table));
    const notCopied = tables.filter((table) => !copied.has(table)).map((table) => getTableName(table));
    expect(notCopied.sort()).toEqual(["business_shards", "credential_forwards", "owner_emails"]);
  });
});
