// `npm run seed --silent [-- --handle <handle> --plan <plan> --country <country>]` (README.md, Two commands): applies
// the local migrations to every database and seeds one business (owner, a fresh API key, a few bookings and orders, an
// owner knowledge source), idempotently, then prints its credentials and where it lives as ONE JSON object on stdout.
// Everything else goes to stderr. `npm start` seeds every demo business of scripts/demo-data.json (`seedDemo`).
// The password hash, the key, the plans, the limit of keys, the shards and every statement come from the service's
// own code (scripts/service.ts): drizzle statements on its schema, rendered as SQL text, since wrangler runs the seed
// as a file.
//
// Where a business goes is the service's rule (docs/scaling.md, Regional shards): the shard of its country
// (`--country`, else its demo data's). Its directory entry and its owner's email are written first, in the global
// database, then its rows in its shard's database, as the service lists a new business (src/domain/access/directory.ts).
// So wrangler runs `d1 migrations apply` once per database, one `d1 execute --file` in the global database for all
// the businesses seeded, and one per business in its shard, each file one D1 batch (a single transaction). The
// business id is derived from the handle, so no SELECT has to come first.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  and,
  asc,
  eq,
  getTableColumns,
  getTableName,
  gte,
  inArray,
  isNull,
  lt,
  ne,
  notExists,
  or,
  type SQL,
  type SQLWrapper,
  sql,
} from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import demo from "./demo-data.json" with { type: "json" };
import { executeLocalSql } from "./local-worker.ts";
import { applyMigrations } from "./migrate.ts";
import {
  DEMO_OWNER_SOURCE,
  db,
  demoBookingRows,
  demoOrderRows,
  fill,
  hashPassword,
  isShardName,
  LEGACY_SHARD,
  MAX_ACTIVE_KEYS,
  newApiKey,
  SHARDS,
  type ShardName,
  schema,
  selectedRowsIds,
  shardForCountry,
  sqlText,
} from "./service.ts";
import { ensureDevVars, PROJECT_ROOT } from "./wrangler.ts";

const { apiKeys, bookings, businesses, businessShards, orders, ownerEmails, ownerKnowledgeSources, owners, PLANS } =
  schema;

type DemoBusiness = (typeof demo.businesses)[number];

/** The first demo business: what `npm run seed` seeds unless told another handle, and what other handles are like. */
const DEFAULT_BUSINESS: DemoBusiness = (() => {
  const [first] = demo.businesses;
  if (!first) throw new Error("scripts/demo-data.json lists no business.");
  return first;
})();

export const DEMO_HANDLE = DEFAULT_BUSINESS.handle;
export const DEMO_PASSWORD = "demo-password";
export const SEEDED_KEY_LABEL = "Seeded demo key";
const HANDLE_PATTERN = /^[a-z0-9-]{3,40}$/;
/** ISO 3166-1 alpha-2, as `businesses.country` stores it. */
const COUNTRY_PATTERN = /^[A-Z]{2}$/;

export type Plan = (typeof PLANS)[number];
export type SeedOptions = {
  handle?: string;
  plan?: Plan;
  /** Where the business goes (src/db/shards.ts, `shardForCountry`): its demo data's country unless given. */
  country?: string;
  /** The local state folder: `.wrangler/state` (or `SECRETARY_PERSIST_TO`) unless given. */
  persistTo?: string;
  /** The state's databases are known to be migrated already: skip the check, which runs wrangler once per database. */
  migrated?: boolean;
  log?: (message: string) => void;
};
export type SeedResult = {
  base_url: string;
  business_id: string;
  handle: string;
  /** The shard that holds the business, and its region (src/db/shards.ts). */
  shard: ShardName;
  region: string;
  api_key: string;
  owner_email: string;
  owner_password: string;
  runtime_token: string;
};

/** A wrong command line: reported on stderr with exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

const USAGE = `Usage: npm run seed --silent [-- --handle <handle>] [--plan ${PLANS.join("|")}] [--country <ISO code, e.g. NL or US>]`;

export function validateHandle(handle: unknown): string {
  if (typeof handle !== "string" || !HANDLE_PATTERN.test(handle)) {
    throw new UsageError(
      `The handle ${JSON.stringify(handle)} is not valid: it must be 3 to 40 characters of lower-case letters, digits and hyphens.`,
    );
  }
  return handle;
}

export function validatePlan(plan: unknown): Plan {
  if (!(PLANS as readonly unknown[]).includes(plan)) {
    throw new UsageError(`The plan ${JSON.stringify(plan)} is not valid: it must be one of ${PLANS.join(", ")}.`);
  }
  return plan as Plan;
}

/** A country code, upper-cased: two letters (ISO 3166-1 alpha-2). */
export function validateCountry(country: unknown): string {
  const code = typeof country === "string" ? country.toUpperCase() : country;
  if (typeof code !== "string" || !COUNTRY_PATTERN.test(code)) {
    throw new UsageError(
      `The country ${JSON.stringify(country)} is not valid: it must be a two-letter ISO 3166-1 code, such as NL or US.`,
    );
  }
  return code;
}

/** @param argv the arguments after the script's path */
export function parseSeedArgs(argv: string[]): { handle?: string; plan?: Plan; country?: string } {
  let parsed: { values: { handle?: string; plan?: string; country?: string } };
  try {
    parsed = parseArgs({
      args: argv,
      options: { handle: { type: "string" }, plan: { type: "string" }, country: { type: "string" } },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  const { handle, plan, country } = parsed.values;
  return {
    ...(handle === undefined ? {} : { handle: validateHandle(handle) }),
    ...(plan === undefined ? {} : { plan: validatePlan(plan) }),
    ...(country === undefined ? {} : { country: validateCountry(country) }),
  };
}

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest();

/**
 * A stable id per handle: the first 16 bytes of SHA-256(handle) written as a UUID version 8 (RFC 9562, custom),
 * variant bits 10.
 */
export function businessIdFor(handle: string): string {
  const bytes = sha256(handle).subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The first of 100 booking and order ids reserved for a handle, so that two seeded businesses never collide:
 * (first 6 hex digits of SHA-256(handle) mod 900000 + 100000) * 100.
 */
export function idBaseFor(handle: string): number {
  return ((Number.parseInt(sha256(handle).toString("hex").slice(0, 6), 16) % 900_000) + 100_000) * 100;
}

/**
 * What a seeded business is like (currency, time zone, settings): the demo business of its handle, else the first
 * demo business of its country, else the first one.
 */
function profileFor(handle: string, country?: string): DemoBusiness {
  return (
    demo.businesses.find((business) => business.handle === handle) ??
    demo.businesses.find((business) => business.country === country) ??
    DEFAULT_BUSINESS
  );
}

export const ownerEmailFor = (handle: string) => `owner@${handle}.example`;

/** "other-shop" → "Other Shop"; a demo business's own name for its handle. */
export function businessNameFor(handle: string): string {
  const own = demo.businesses.find((business) => business.handle === handle);
  if (own) return own.name;
  return handle
    .split("-")
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join(" ");
}

type Value = string | number | boolean | null;

/**
 * The demo bookings and orders of one business (src/domain/sandbox/demo-data.ts, the data a sandbox business starts
 * with too), numbered from idBaseFor(handle) + 1, in the business's currency and time zone.
 */
function demoRows({
  businessId,
  handle,
  profile,
  now,
}: {
  businessId: string;
  handle: string;
  profile: DemoBusiness;
  now: Date;
}) {
  const base = idBaseFor(handle);
  const business = { ...profile, businessId, handle, now: now.getTime(), idOf: (_: string, n: number) => base + n };
  return { bookingRows: demoBookingRows(business), orderRows: demoOrderRows(business) };
}

/** A value as a selected column of an `INSERT ... SELECT`. */
const literal = <T extends Value>(value: T) => sql<T>`${value}`;

/** A `FROM` of one row, for an `INSERT ... SELECT` of literals that its `WHERE` decides on. */
const ONE_ROW = sql`(select 1)`;

/**
 * `INSERT INTO table SELECT ... FROM from WHERE where`: one row per row of `from` that `where` keeps, made of
 * `fields`; drizzle wants every column of the table, in its order, so the others are NULL, but for an id the shard
 * numbers from its sequence (src/db/ids.ts; a database from before the sequences numbers it itself).
 */
export function insertSelect<Table extends SQLiteTable>(
  table: Table,
  fields: Partial<Record<keyof Table["$inferInsert"], SQLWrapper>>,
  from: SQLiteTable | SQL,
  where: SQL | undefined,
) {
  const given: Record<string, SQLWrapper | undefined> = fields;
  const selected = Object.fromEntries(
    Object.entries(getTableColumns(table)).map(([key, column]) => [
      key,
      given[key] ?? (column.primary && column.defaultFn ? selectedRowsIds(getTableName(table)) : sql`null`),
    ]),
  ) as Record<string, SQL>;
  return db.insert(table).select(db.select(selected).from(from).where(where) as never);
}

/** The business's unrevoked API keys, counted: the limit of MAX_ACTIVE_KEYS (src/domain/access/api-keys.ts). */
const activeKeysOf = (businessId: string): SQL<number> =>
  sql`(select count(*) from ${apiKeys} where ${apiKeys.businessId} = ${businessId} and ${apiKeys.revokedAt} is null)`;

/** Each table's column names, by table name: what a database migrated up to some migration has. */
export type ColumnsByTable = Map<string, Set<string>> & { migration: string };

/** The migration from which each shard numbers its rows from its own sequences (src/db/ids.ts). */
const IDS_PER_SHARD = "0018";

/**
 * The tables and columns of a database migrated up to the migration `tag` ("0011"): drizzle-kit's snapshot of the
 * schema at that migration (migrations/meta/<tag>_snapshot.json), so that the seed can write a database of an older
 * schema, as the upgrade check does (scripts/upgrade-check.ts; docs/scaling.md, From one database to shards).
 */
export function columnsAtMigration(tag: string): ColumnsByTable {
  const path = join(PROJECT_ROOT, "migrations", "meta", `${tag}_snapshot.json`);
  const snapshot = JSON.parse(readFileSync(path, "utf8")) as {
    tables: Record<string, { name: string; columns: Record<string, { name: string }> }>;
  };
  const columns = new Map(
    Object.values(snapshot.tables).map((table) => [
      table.name,
      new Set(Object.values(table.columns).map((column) => column.name)),
    ]),
  );
  return Object.assign(columns, { migration: tag });
}

/** Where drizzle keeps a table's columns, which its inserts list (drizzle-orm/table.js; not in its types). */
const TABLE_COLUMNS = Symbol.for("drizzle:Columns");

/**
 * `table` as a database of an older schema has it (`columns`, {@link columnsAtMigration}): the same table with only the
 * columns that database has, so that an insert names no column a later migration added (drizzle names every column
 * of the table in an insert). The table itself when `columns` is not given or does not know the table.
 */
export function tableAsMigrated<Table extends SQLiteTable>(table: Table, columns: ColumnsByTable | undefined): Table {
  const present = columns?.get(getTableName(table));
  if (!present) return table;
  // Before the shards' id sequences (migrations/0018_ids_per_shard.sql), SQLite numbered the rows itself.
  const numberedBySqlite = columns !== undefined && columns.migration < IDS_PER_SHARD;
  const copy = Object.assign(Object.create(Object.getPrototypeOf(table)), table) as Table;
  (copy as unknown as Record<symbol, unknown>)[TABLE_COLUMNS] = Object.fromEntries(
    Object.entries(getTableColumns(table))
      .filter(([, column]) => present.has(column.name))
      .map(([key, column]) => [
        key,
        numberedBySqlite && column.defaultFn && column.primary
          ? Object.assign(Object.create(Object.getPrototypeOf(column)), column, { defaultFn: undefined })
          : column,
      ]),
  );
  return copy;
}

export type SeedInput = {
  handle: string;
  plan?: Plan;
  /** The business's country (`businesses.country`): its demo data's unless given. */
  country?: string;
  ownerEmail: string;
  passwordHash: string;
  apiKey: { keyHash: string; displayPrefix: string };
  now: Date;
  /** The columns of a database of an older schema ({@link columnsAtMigration}): its inserts name only those. */
  columns?: ColumnsByTable;
};

/**
 * The seed of one business in its shard's database, as one SQL file run as one D1 batch. Its last statement reports
 * what the file did.
 */
export function seedSql({ handle, plan, country, ownerEmail, passwordHash, apiKey, now, columns }: SeedInput): string {
  const into = <Table extends SQLiteTable>(table: Table) => tableAsMigrated(table, columns);
  const businessId = businessIdFor(handle);
  const nowIso = now.toISOString();
  const name = businessNameFor(handle);
  const business = profileFor(handle, country);
  const knowledgeSource = DEMO_OWNER_SOURCE;
  const { bookingRows, orderRows } = demoRows({ businessId, handle, profile: business, now });
  const sourceVars = { handle, shortName: handle === business.handle ? business.shortName : name };
  const activeKeys = activeKeysOf(businessId);
  const theBusiness = eq(businesses.id, businessId);
  const statements = [
    `-- Seed for ${handle} (${businessId}), ${nowIso}`,
    db
      .insert(into(businesses))
      .values({
        id: businessId,
        handle,
        name,
        currency: business.currency,
        country: country ?? business.country,
        timeZone: business.timeZone,
        plan: plan ?? validatePlan(business.plan),
        planActive: true,
        // The owner's own settings, which the Secretary answers from first (GET /internal/v1/businesses/{id}/context).
        settings: business.settings,
        createdAt: nowIso,
        updatedAt: nowIso,
      })
      .onConflictDoNothing(),
    // An explicit --plan also applies to a business that already exists.
    plan === undefined
      ? undefined
      : db
          .update(businesses)
          .set({ plan, planActive: true, updatedAt: nowIso })
          .where(and(theBusiness, or(ne(businesses.plan, plan), ne(businesses.planActive, true)))),
    db
      .insert(into(owners))
      .values({ businessId, email: ownerEmail, passwordHash, createdAt: nowIso })
      .onConflictDoNothing(),
    // Keep to the limit of active keys: make room by revoking the oldest seeded key...
    db
      .update(apiKeys)
      .set({ revokedAt: nowIso })
      .where(
        and(
          eq(
            apiKeys.id,
            db
              .select({ id: apiKeys.id })
              .from(apiKeys)
              .where(
                and(eq(apiKeys.businessId, businessId), isNull(apiKeys.revokedAt), eq(apiKeys.label, SEEDED_KEY_LABEL)),
              )
              .orderBy(asc(apiKeys.createdAt), asc(apiKeys.id))
              .limit(1),
          ),
          gte(activeKeys, MAX_ACTIVE_KEYS),
        ),
      ),
    // ...and add the new key only when there is room (there is none when every active key is the owner's own).
    insertSelect(
      into(apiKeys),
      {
        businessId: businesses.id,
        keyHash: literal(apiKey.keyHash),
        displayPrefix: literal(apiKey.displayPrefix),
        label: literal(SEEDED_KEY_LABEL),
        createdAt: literal(nowIso),
      },
      businesses,
      and(theBusiness, lt(activeKeys, MAX_ACTIVE_KEYS)),
    ),
    db.insert(into(bookings)).values(bookingRows).onConflictDoNothing(),
    db.insert(into(orders)).values(orderRows).onConflictDoNothing(),
    // No unique key to conflict on: inserted only while the business has no owner source at all.
    insertSelect(
      into(ownerKnowledgeSources),
      {
        businessId: businesses.id,
        kind: literal(knowledgeSource.kind),
        title: literal(fill(knowledgeSource.title, sourceVars)),
        location: literal(fill(knowledgeSource.location, sourceVars)),
        createdAt: literal(nowIso),
      },
      businesses,
      and(
        theBusiness,
        notExists(
          db
            .select({ one: sql`1` })
            .from(ownerKnowledgeSources)
            .where(eq(ownerKnowledgeSources.businessId, businessId)),
        ),
      ),
    ),
    db
      .select({
        business_id: sql`${businesses.id}`.as("business_id"),
        plan: sql`${businesses.plan}`.as("plan"),
        plan_active: sql`${businesses.planActive}`.as("plan_active"),
        // drizzle leaves the columns of a one-table select unqualified: the subqueries name the business by its id.
        owner_email: sql`(select ${owners.email} from ${owners} where ${owners.businessId} = ${businessId})`.as(
          "owner_email",
        ),
        key_stored: sql`(select count(*) from ${apiKeys} where ${apiKeys.keyHash} = ${apiKey.keyHash})`.as(
          "key_stored",
        ),
        active_keys: sql`${activeKeys}`.as("active_keys"),
      })
      .from(businesses)
      .where(eq(businesses.handle, handle)),
  ];
  return `${statements
    .map((s) => (typeof s === "string" || s === undefined ? s : sqlText(s)))
    .filter(Boolean)
    .join("\n\n")}\n`;
}

/**
 * The seed of one business on the Business plan (owner, demo bookings and orders, an owner knowledge source) with
 * the API key `apiKey`, for its shard's database: what the soak and the bench start from.
 */
export async function businessSeedSql(
  handle: string,
  apiKey: { keyHash: string; displayPrefix: string },
  now: Date,
  country?: string,
) {
  return seedSql({
    handle,
    plan: "business",
    country,
    ownerEmail: ownerEmailFor(handle),
    passwordHash: await hashPassword(DEMO_PASSWORD),
    apiKey,
    now,
  });
}

/** A business to list in the directory: its id, the shard it goes to, its owner's sign-in email. */
export type Listing = { businessId: string; shard: ShardName; ownerEmail: string };

/**
 * The global rows of seeded businesses, for the global database (binding `DB`), run before their rows are written in
 * their shards as the service lists a new business (src/domain/access/directory.ts): each one's directory entry and
 * its owner's email. A business listed already keeps its entry; one that the legacy database holds already (seeded
 * before sharding) is left unlisted, so in legacy, as an old database's businesses are (docs/scaling.md, From one
 * database to shards). Its last two statements answer the entries and the legacy businesses (`shardsOfListings`).
 */
export function directorySql(listings: Listing[], now: Date): string {
  const createdAt = literal(now.toISOString());
  const inLegacy = (businessId: string) =>
    db.select({ one: sql`1` }).from(businesses).where(eq(businesses.id, businessId));
  const ids = listings.map((listing) => listing.businessId);
  const statements = [
    ...listings.flatMap(({ businessId, shard, ownerEmail }) => [
      insertSelect(
        businessShards,
        // A seeded business is a live one, never a sandbox (docs/decisions.md, Sandbox businesses).
        { businessId: literal(businessId), shard: literal(shard), createdAt, sandbox: literal(false) },
        ONE_ROW,
        notExists(inLegacy(businessId)),
      ).onConflictDoNothing(),
      insertSelect(
        ownerEmails,
        { email: literal(ownerEmail), businessId: literal(businessId), createdAt },
        ONE_ROW,
        notExists(inLegacy(businessId)),
      ).onConflictDoNothing(),
    ]),
    db
      .select({ business_id: businessShards.businessId, shard: businessShards.shard })
      .from(businessShards)
      .where(inArray(businessShards.businessId, ids)),
    // Named as the answer is read: drizzle writes a one-table select's columns by their own names.
    db
      .select({ business_id: sql`${businesses.id}`.as("business_id") })
      .from(businesses)
      .where(inArray(businesses.id, ids)),
  ];
  return `${statements.map((statement) => sqlText(statement)).join("\n\n")}\n`;
}

/** The rows of each statement of a `wrangler d1 execute --json` answer, in order. */
export function resultRows(stdout: string | undefined): Record<string, unknown>[][] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout ?? "");
  } catch {
    throw new Error(`wrangler d1 execute printed something other than JSON:\n${stdout?.trim()}`);
  }
  const results = Array.isArray(parsed) ? parsed : [];
  return results.map((result) => {
    const rows = result && typeof result === "object" && "results" in result ? result.results : undefined;
    if (!Array.isArray(rows)) throw new Error(`Unexpected answer from wrangler d1 execute:\n${stdout?.trim()}`);
    return rows;
  });
}

/**
 * Where each business of a run of {@link directorySql} is: its directory entry's shard, else legacy when the legacy
 * database holds it (the directory's rule: src/domain/access/directory.ts).
 */
export function shardsOfListings(stdout: string | undefined): Map<string, ShardName> {
  const sets = resultRows(stdout);
  const [listed, legacy] = [sets.at(-2), sets.at(-1)];
  if (!listed || !legacy) throw new Error(`Unexpected answer from wrangler d1 execute:\n${stdout?.trim()}`);
  const shards = new Map<string, ShardName>(legacy.map((row) => [String(row.business_id), LEGACY_SHARD]));
  for (const row of listed) {
    const shard = String(row.shard);
    if (!isShardName(shard))
      throw new Error(`The directory lists ${String(row.business_id)} in an unknown shard ${shard}.`);
    shards.set(String(row.business_id), shard);
  }
  return shards;
}

export type BusinessToSeed = { handle: string; plan?: Plan; country?: string };

/**
 * Seeds (or reuses) each business, each with a fresh API key of its shard (`newApiKey(shard)`), and returns their
 * credentials. A business seeded before stays in its shard; asking for another `country` for it is an error, since a
 * business moves only by the move procedure (docs/scaling.md, Moving a business between shards).
 */
export async function seedBusinesses(
  toSeed: BusinessToSeed[],
  options: Pick<SeedOptions, "persistTo" | "migrated" | "log"> = {},
): Promise<SeedResult[]> {
  const log = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  const where = { persistTo: options.persistTo };
  const now = new Date();
  const wanted = toSeed.map(({ handle, plan, country }) => {
    const valid = validateHandle(handle);
    const place = country === undefined ? profileFor(valid).country : validateCountry(country);
    return {
      handle: valid,
      plan: plan === undefined ? undefined : validatePlan(plan),
      country: place,
      countryGiven: country !== undefined,
      businessId: businessIdFor(valid),
      shard: shardForCountry(place),
      ownerEmail: ownerEmailFor(valid),
    };
  });

  const devVars = ensureDevVars({ log });
  const baseUrl = devVars.BASE_URL;
  const runtimeToken = devVars.RUNTIME_TOKEN;
  if (!baseUrl || !runtimeToken) throw new Error(".dev.vars lacks BASE_URL or RUNTIME_TOKEN.");

  if (!options.migrated) {
    log("Applying the local D1 migrations to every database (scripts/migrate.ts)...");
    await applyMigrations(where);
  }
  const global = { binding: SHARDS[LEGACY_SHARD].binding, sql: directorySql(wanted, now) };
  const placed = shardsOfListings(await executeLocalSql(where, global));

  const results: SeedResult[] = [];
  for (const business of wanted) {
    const { handle, businessId, ownerEmail } = business;
    const shard = placed.get(businessId);
    if (!shard) throw new Error(`The directory did not list ${handle} (${businessId}).`);
    if (shard !== business.shard) {
      const moved = `${handle} is in the shard ${shard} already, seeded there before`;
      if (business.countryGiven) {
        throw new Error(
          `${moved}, not in ${business.shard} where --country ${business.country} places new businesses: a business moves only by the move procedure (docs/scaling.md, Moving a business between shards). Seed another handle, or delete the local state to start over.`,
        );
      }
      log(`${moved}: it stays there.`);
    }
    const apiKey = newApiKey(shard);
    const binding = SHARDS[shard].binding;
    log(`Seeding ${handle} in ${binding} (shard ${shard})...`);
    const file = seedSql({
      handle,
      plan: business.plan,
      country: business.country,
      ownerEmail,
      passwordHash: await hashPassword(DEMO_PASSWORD),
      apiKey,
      now,
    });
    const [row] = resultRows(await executeLocalSql(where, { binding, sql: file })).at(-1) ?? [];
    if (!row || row.business_id !== businessId) {
      throw new Error(
        `The business ${handle} exists with the id ${String(row?.business_id)}, not the seed's ${businessId}; delete .wrangler/state to start over.`,
      );
    }
    if (row.owner_email !== ownerEmail) {
      throw new Error(
        `The business ${handle} has another owner (${String(row.owner_email)}) than the seed's ${ownerEmail}.`,
      );
    }
    if (row.key_stored !== 1) {
      throw new Error(
        `The business ${handle} already has ${MAX_ACTIVE_KEYS} active API keys and none of them is a seeded one: revoke one to seed a new key.`,
      );
    }
    log(
      `Seeded ${handle} in shard ${shard}: plan ${String(row.plan)}${row.plan_active ? "" : " (lapsed)"}, active API keys: ${String(row.active_keys)}.`,
    );
    results.push({
      base_url: baseUrl,
      business_id: businessId,
      handle,
      shard,
      region: SHARDS[shard].region,
      api_key: apiKey.key,
      owner_email: ownerEmail,
      owner_password: DEMO_PASSWORD,
      runtime_token: runtimeToken,
    });
  }
  return results;
}

/** Seeds (or reuses) one business and returns its credentials, with a fresh API key. */
export async function seed(options: SeedOptions = {}): Promise<SeedResult> {
  const { handle = DEMO_HANDLE, plan, country } = options;
  const [result] = await seedBusinesses([{ handle, plan, country }], options);
  if (!result) throw new Error(`${handle} was not seeded.`);
  return result;
}

/** Seeds (or reuses) every demo business of scripts/demo-data.json, each in the shard of its country: `npm start`. */
export function seedDemo(options: Pick<SeedOptions, "persistTo" | "log"> = {}): Promise<SeedResult[]> {
  return seedBusinesses(
    demo.businesses.map(({ handle }) => ({ handle })),
    options,
  );
}

async function main() {
  try {
    const result = await seed(parseSeedArgs(process.argv.slice(2)));
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${error.message}\n`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`Seeding failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  }
}

if (import.meta.main) await main();
