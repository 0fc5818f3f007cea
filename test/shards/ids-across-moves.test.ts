import { env } from "cloudflare:test";
import { eq, getTableColumns, getTableName, inArray, is } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { describe, expect, it, vi } from "vitest";
import { ID_SLOTS } from "../../src/db/ids";
import * as schema from "../../src/db/schema";
import { shardBinding } from "../../src/db/shard-bindings";
import { SHARD_NAMES, SHARDS, type ShardName } from "../../src/db/shards";
import { MAX_ENDPOINTS_PER_BUSINESS } from "../../src/domain/webhooks/endpoints";
import { moved } from "../helpers/business-move";
import { createBusiness, shardDb } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { createIntake } from "../helpers/intakes";
import { connectApp, createOwnerBusiness, me } from "../helpers/oauth";
import { bookingObject, reportChange } from "../helpers/platform";
import { newOrder } from "../helpers/platform-changes";
import { receiverBox } from "../helpers/receiver";
import { subscribe } from "../helpers/webhooks";

// docs/scaling.md, Ids unique across shards: a row keeps its id through any moves, and no shard hands out an id that
// another shard's row may carry; bookings and orders keep the core platform's numbers, keyed per business.

/** Every table of the schema, by its SQL name. */
const TABLES = new Map(
  Object.values(schema as Record<string, unknown>)
    .filter((value): value is SQLiteTable => is(value, SQLiteTable))
    .map((table) => [getTableName(table), table]),
);

describe("every table whose ids the service numbers", () => {
  it.each(SHARD_NAMES)("takes them from the shard's own sequence in %s, never from AUTOINCREMENT", async (shard) => {
    const d1 = shardBinding(env, shard);
    const { results: tables } = await d1
      .prepare("select name from sqlite_master where type = 'table' and sql like '%AUTOINCREMENT%'")
      .all<{ name: string }>();
    const { results: sequences } = await d1.prepare("select name, next from id_sequences").all<{
      name: string;
      next: number;
    }>();
    const { results: triggers } = await d1
      .prepare("select name from sqlite_master where type = 'trigger'")
      .all<{ name: string }>();
    expect(tables.length).toBeGreaterThan(10);
    for (const { name } of tables.filter((table) => table.name !== "d1_migrations")) {
      const sequence = sequences.find((row) => row.name === name);
      expect(sequence?.next, `${name}'s sequence in ${shard}`).toBeDefined();
      expect((sequence?.next ?? -1) % ID_SLOTS, `${name}'s slot in ${shard}`).toBe(SHARDS[shard].idSlot);
      expect(triggers.map((trigger) => trigger.name)).toContain(`${name}_id_sequence`);
      const table = TABLES.get(name);
      expect(table && getTableColumns(table).id?.defaultFn, `${name}.id draws from its sequence`).toBeDefined();
    }
  });
});

/** A business in `shard` with an app connection, an endpoint, an intake and a booking reported. */
async function shopIn(shard: ShardName) {
  const owner = await createOwnerBusiness({ shard });
  const app = await connectApp(owner);
  const endpoint = await subscribe(owner.apiKey, "https://partner.example/hooks");
  const intake = await createIntake(owner.apiKey);
  return { ...owner, app, endpoint, intake };
}

type Shop = Awaited<ReturnType<typeof shopIn>>;

const read = async <T>(key: string, path: string) => {
  const response = await call(`/api/v1${path}`, { key });
  await expect(response, path).toHaveStatus(200);
  return json<T>(response);
};

/** What each of the shop's credentials reads: its own business, endpoints and intakes, and nothing else. */
async function expectReadsItsOwn(shop: Shop) {
  for (const credential of [shop.apiKey, shop.app.tokens.access_token]) {
    const response = await me(credential);
    await expect(response).toHaveStatus(200);
    expect((await json<{ id: string }>(response)).id).toBe(shop.business.id);
  }
  const endpoints = await read<{ data: { id: number }[] }>(shop.apiKey, "/webhooks");
  expect(endpoints.data.map((endpoint) => endpoint.id)).toEqual([shop.endpoint.id]);
  const intakes = await read<{ data: { id: number }[] }>(shop.apiKey, "/intakes");
  expect(intakes.data.map((intake) => intake.id)).toEqual([shop.intake.id]);
}

describe("moves in every direction, then new records on both sides", { timeout: 30_000 }, () => {
  it("never gives two records of two shards one id, and each credential keeps reading its own business", async () => {
    // A business of us1 moves to eu1 and back: its rows pass through eu1 with their us1 ids.
    const traveller = await shopIn("us1");
    await moved(traveller.business.id, "eu1");
    // Records made in eu1 while it holds us1's rows, and in us1 meanwhile, each in its own shard's slot.
    const european = await shopIn("eu1");
    const american = await shopIn("us1");
    await moved(traveller.business.id, "us1");
    const later = await shopIn("eu1");
    for (const [shop, shard] of [
      [european, "eu1"],
      [later, "eu1"],
      [american, "us1"],
    ] as const) {
      for (const id of [shop.app.grantId, shop.endpoint.id, shop.intake.id]) {
        expect(id % ID_SLOTS, `an id of ${shard}`).toBe(SHARDS[shard].idSlot);
      }
    }
    const grants = [traveller, european, american, later].map((shop) => shop.app.grantId);
    expect(new Set(grants).size).toBe(grants.length);
    // The eu1 businesses move onto us1, beside the traveller and the American shop: no row meets another's.
    await moved(european.business.id, "us1");
    await moved(later.business.id, "us1");
    for (const shop of [traveller, european, american, later]) await expectReadsItsOwn(shop);
  });
});

describe("bookings and orders of the same numbers in two businesses", { timeout: 30_000 }, () => {
  it("are each business's own, in two shards and after one moves in beside the other", async () => {
    const shops = await Promise.all([createOwnerBusiness({ shard: "eu1" }), createOwnerBusiness({ shard: "us1" })]);
    const base = 880_000_000 + Math.floor(Math.random() * 1_000_000) * 100;
    for (const [index, shop] of shops.entries()) {
      for (let n = 0; n < 48; n++) {
        const booking = bookingObject(base + n, { notes: `${shop.business.id} ${n}` });
        await expect(await reportChange(shop.business.id, { booking })).toHaveStatus(201);
      }
      for (let n = 0; n < 8; n++) {
        const order = newOrder({ id: base + n, notes: `order ${index} ${n}` });
        await expect(await reportChange(shop.business.id, { order })).toHaveStatus(201);
      }
    }
    const [european, american] = shops;
    if (!european || !american) throw new Error("no shops");
    await moved(american.business.id, "eu1");
    expect(await shardDb("us1").$count(schema.bookings, eq(schema.bookings.businessId, american.business.id))).toBe(0);
    for (const [index, shop] of shops.entries()) {
      const bookings = await read<{ data: { id: number; notes: string }[] }>(shop.apiKey, "/appointments?limit=100");
      expect(bookings.data).toHaveLength(48);
      expect(bookings.data.every((booking) => booking.notes.startsWith(shop.business.id))).toBe(true);
      const orders = await read<{ data: { notes: string }[] }>(shop.apiKey, "/orders?limit=100");
      expect(orders.data.map((order) => order.notes).sort()).toEqual(
        Array.from({ length: 8 }, (_, n) => `order ${index} ${n}`).sort(),
      );
    }
  });
});

describe("rows inserted from a select (a report's deliveries, the consumer's attempts)", () => {
  it.each(SHARD_NAMES)("are numbered from the shard's sequence in %s too", async (shard) => {
    const { business, apiKey } = await createBusiness({ shard });
    // The most endpoints one event reaches: one statement inserts 20 deliveries.
    for (let n = 0; n < MAX_ENDPOINTS_PER_BUSINESS; n++) await subscribe(apiKey, receiverBox("ids-fan-out").url("/ok"));
    for (let n = 0; n < 2; n++) {
      const report = await reportChange(business.id, { booking: bookingObject(770_000_000 + n) });
      await expect(report).toHaveStatus(201);
    }
    const deliveries = await shardDb(shard)
      .select({ id: schema.webhookDeliveries.id })
      .from(schema.webhookDeliveries)
      .where(eq(schema.webhookDeliveries.businessId, business.id));
    expect(deliveries).toHaveLength(2 * MAX_ENDPOINTS_PER_BUSINESS);
    const attempts = await vi.waitFor(
      async () => {
        const rows = await shardDb(shard)
          .select({ id: schema.deliveryAttempts.id })
          .from(schema.deliveryAttempts)
          .where(
            inArray(
              schema.deliveryAttempts.deliveryId,
              deliveries.map((row) => row.id),
            ),
          );
        expect(rows).toHaveLength(2 * MAX_ENDPOINTS_PER_BUSINESS);
        return rows;
      },
      { timeout: 10_000, interval: 100 },
    );
    for (const { id } of [...deliveries, ...attempts]) expect(id % ID_SLOTS).toBe(SHARDS[shard].idSlot);
  });
});
