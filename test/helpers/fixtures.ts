import { env } from "cloudflare:test";
import { insertMany, runBatch } from "../../src/db/batches";
import { globalDatabase, shardDatabase } from "../../src/db/client";
import { apiKeys, type bookings, businesses, type orders, type Plan } from "../../src/db/schema";
import { shardBinding } from "../../src/db/shard-bindings";
import { LEGACY_SHARD, SANDBOX_SHARD, SHARDS, type ShardName } from "../../src/db/shards";
import { newApiKey } from "../../src/domain/access/api-key-format";
import { listBusiness } from "../../src/domain/access/directory";

/**
 * Where the fixtures put a business unless a test says otherwise: a regional shard, as the service places every new
 * business (docs/scaling.md, Regional shards). A test about a business from before sharding asks for `legacy`.
 */
export const DEFAULT_SHARD: ShardName = "eu1";

/**
 * The default shard's binding and its name among the Worker's bindings: for a test that wraps or alters the database
 * of its businesses (a counting, failing or racing view of it).
 */
export const shardD1 = shardBinding(env, DEFAULT_SHARD);
export const SHARD_D1_BINDING = SHARDS[DEFAULT_SHARD].binding;

/** The database of the fixtures' businesses: the default shard's. */
export const db = shardDatabase(shardD1);

/** The legacy shard's database, for a test about a business created before sharding. */
export const legacyDb = shardDatabase(env.DB);

/** The global database: the directory, owners' emails, OAuth clients' registrations (src/db/schema/directory.ts). */
export const globalDb = globalDatabase(env.DB);

/** The database of a shard (src/db/shards.ts). */
export const shardDb = (shard: ShardName) => shardDatabase(shardBinding(env, shard));

let counter = 0;
const unique = () => `${Date.now().toString(36)}${(counter++).toString(36)}`;

/**
 * A business with an owner-created API key, stored as the service stores them (hash only), in `shard` (the legacy one
 * unless said), and for a regional shard listed in the directory first, with its owner's email when given, as the
 * service lists a new business (src/domain/access/directory.ts).
 */
export async function createBusiness(
  options: {
    plan?: Plan;
    active?: boolean;
    name?: string;
    shard?: ShardName;
    ownerEmail?: string;
    /** A sandbox business, with a test key (docs/guides/sandbox.md). */
    sandbox?: boolean;
  } = {},
) {
  const now = new Date().toISOString();
  const id = crypto.randomUUID();
  const handle = `shop-${unique()}`;
  // A sandbox business is in the sandbox database, as the service places every one (src/db/shards.ts).
  const shard = options.shard ?? (options.sandbox ? SANDBOX_SHARD : DEFAULT_SHARD);
  // A sandbox business is always listed, even in legacy: the runtime API refuses it by its directory row.
  if (shard !== LEGACY_SHARD || options.sandbox) {
    await listBusiness(
      globalDb,
      { businessId: id, shard, ownerEmail: options.ownerEmail, sandbox: options.sandbox },
      Date.now(),
    );
  }
  const [business] = await shardDb(shard)
    .insert(businesses)
    .values({
      id,
      handle,
      name: options.name ?? `Shop ${handle}`,
      currency: "EUR",
      country: "NL",
      timeZone: "Europe/Amsterdam",
      plan: options.plan ?? "pro",
      planActive: options.active ?? true,
      sandbox: options.sandbox ?? false,
      createdAt: now,
      updatedAt: now,
    })
    .returning();
  if (!business) throw new Error("business not created");
  const { apiKey } = await createApiKey(business.id, { shard, test: options.sandbox });
  return { business, apiKey, shard };
}

export async function createApiKey(
  businessId: string,
  options: { revoked?: boolean; shard?: ShardName; test?: boolean } = {},
) {
  const shard = options.shard ?? DEFAULT_SHARD;
  const { key: apiKey, keyHash, displayPrefix } = newApiKey(shard, { test: options.test ?? false });
  const now = new Date().toISOString();
  const [row] = await shardDb(shard)
    .insert(apiKeys)
    .values({
      businessId,
      keyHash,
      displayPrefix,
      label: "Test key",
      createdAt: now,
      revokedAt: options.revoked ? now : null,
    })
    .returning();
  if (!row) throw new Error("key not created");
  return { apiKey, apiKeyId: row.id };
}

let nextId = 1000;

export function bookingRow(businessId: string, overrides: Partial<typeof bookings.$inferInsert> = {}) {
  const id = nextId++;
  return {
    id,
    businessId,
    status: "confirmed",
    date: "2026-12-01",
    time: "10:00",
    durationMinutes: 45,
    serviceId: "svc_cut",
    serviceName: "Haircut",
    servicePrice: "€35",
    clientName: "Ana Souza",
    clientEmail: "ana@example.com",
    clientPhone: "+31612345678",
    paymentStatus: "unpaid",
    paymentAmountPaid: 0,
    paymentAgreedAmount: null,
    paymentCurrency: "EUR",
    paymentReference: null,
    location: null,
    notes: null,
    rescheduleCount: 0,
    originalDate: null,
    originalTime: null,
    rescheduleLink: `https://book.example/r/${id}`,
    cancelLink: `https://book.example/c/${id}`,
    conversationId: null,
    createdAt: new Date().toISOString(),
    ...overrides,
  } satisfies typeof bookings.$inferInsert;
}

export function orderRow(businessId: string, overrides: Partial<typeof orders.$inferInsert> = {}) {
  return {
    id: nextId++,
    businessId,
    status: "pending",
    items: [{ service_id: "svc_bread", name: "Sourdough", qty: 2, unit_price: 4.5 }],
    total: 9,
    payOnDelivery: false,
    fulfillmentType: "pickup",
    deliveryAddress: null,
    deliveryNotes: null,
    trackingNumber: null,
    carrier: null,
    readyAt: null,
    estimatedReadyAt: null,
    trackingUrl: null,
    clientName: "Ben Okafor",
    clientEmail: null,
    clientPhone: "+31687654321",
    paymentStatus: "paid",
    paymentAmountPaid: 9,
    notes: null,
    conversationId: null,
    createdAt: new Date().toISOString(),
    ...overrides,
  } satisfies typeof orders.$inferInsert;
}

/** Inserts many rows in one batch, split as D1's parameter limit requires. */
export async function insertAll<T extends typeof bookings | typeof orders>(table: T, rows: T["$inferInsert"][]) {
  await runBatch(db, insertMany(db, table, rows));
}

/** The start of a key that the owner's pages show to recognise it: its prefix and 4 random characters. */
export const displayPrefixOf = (apiKey: string) => apiKey.slice(0, apiKey.length - 43 + 4);
