// `npm run seed --silent [-- --handle <handle> --plan <plan>]` (README.md, Two commands): applies the local
// migrations and seeds one business (owner, a fresh API key, a few bookings and orders, an owner knowledge source),
// idempotently, then prints its credentials as ONE JSON object on stdout. Everything else goes to stderr.
// The demo data is in scripts/demo-data.json. The password hash, the key, the plans, the limit of keys and every
// statement come from the service's own code (scripts/service.ts): drizzle statements on its schema, rendered as
// SQL text, since wrangler runs the seed as a file.
//
// Two wrangler invocations only: `d1 migrations apply` and one `d1 execute --file`, which runs the whole file as one
// D1 batch (a single transaction). The business id is derived from the handle, so no SELECT has to come first.
import { createHash } from "node:crypto";
import { realpathSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  and,
  asc,
  eq,
  getTableColumns,
  gte,
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
import { prepareLocalState } from "./local-worker.ts";
import { db, hashPassword, MAX_ACTIVE_KEYS, newApiKey, schema, sqlText } from "./service.ts";
import { ensureDevVars } from "./wrangler.ts";

const { apiKeys, bookings, businesses, orders, ownerKnowledgeSources, owners, PLANS } = schema;

export const DEMO_HANDLE = demo.business.handle;
export const DEMO_PASSWORD = "demo-password";
export const SEEDED_KEY_LABEL = "Seeded demo key";
const HANDLE_PATTERN = /^[a-z0-9-]{3,40}$/;

export type Plan = (typeof PLANS)[number];
export type SeedOptions = {
  handle?: string;
  plan?: Plan;
  /** The local state folder: `.wrangler/state` (or `SECRETARY_PERSIST_TO`) unless given. */
  persistTo?: string;
  log?: (message: string) => void;
};
export type SeedResult = {
  base_url: string;
  business_id: string;
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

const USAGE = `Usage: npm run seed --silent [-- --handle <handle>] [--plan ${PLANS.join("|")}]`;

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

/** @param argv the arguments after the script's path */
export function parseSeedArgs(argv: string[]): { handle?: string; plan?: Plan } {
  let parsed: { values: { handle?: string; plan?: string } };
  try {
    parsed = parseArgs({
      args: argv,
      options: { handle: { type: "string" }, plan: { type: "string" } },
      strict: true,
      allowPositionals: false,
    });
  } catch (error) {
    throw new UsageError(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`);
  }
  const { handle, plan } = parsed.values;
  return {
    ...(handle === undefined ? {} : { handle: validateHandle(handle) }),
    ...(plan === undefined ? {} : { plan: validatePlan(plan) }),
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

/** "other-shop" → "Other Shop" */
export function businessNameFor(handle: string): string {
  if (handle === DEMO_HANDLE) return demo.business.name;
  return handle
    .split("-")
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join(" ");
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

type Value = string | number | boolean | null;

/** `{name}` in a demo-data.json string replaced by vars[name]. */
function fill(text: string, vars: Record<string, string | number>): string {
  return text.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (!(name in vars)) throw new Error(`scripts/demo-data.json uses {${name}}, which the seed does not know.`);
    return String(vars[name]);
  });
}

/**
 * One demo-data.json value as a column value: `{ days: n }` is the date n days from today (`midnight`, today's date in
 * the business's time zone as UTC midnight), `{ hours: n }` the instant n hours from `now`, and strings are filled in.
 */
function demoValue(value: unknown, context: { now: Date; midnight: number; vars: Record<string, string | number> }) {
  if (typeof value === "string") return fill(value, context.vars);
  if (value === null || typeof value === "number" || typeof value === "boolean") return value;
  const { days, hours } = value as { days?: unknown; hours?: unknown };
  if (typeof days === "number") return new Date(context.midnight + days * DAY_MS).toISOString().slice(0, 10);
  if (typeof hours === "number") return new Date(context.now.getTime() + hours * HOUR_MS).toISOString();
  throw new Error(`scripts/demo-data.json has a value the seed does not understand: ${JSON.stringify(value)}`);
}

/**
 * A row written with the table's column names (as demo-data.json writes them) as drizzle's values for `table`, keyed
 * by the schema's property names; a name the table does not have is an error.
 */
function byColumnName<Table extends SQLiteTable>(table: Table, row: Record<string, unknown>): Table["$inferInsert"] {
  const properties = new Map(
    Object.entries(table).flatMap(([key, column]) => {
      const name = (column as { name?: unknown } | null)?.name;
      return typeof name === "string" && key !== "_" ? [[name, key] as const] : [];
    }),
  );
  return Object.fromEntries(
    Object.entries(row).map(([name, value]) => {
      const key = properties.get(name);
      if (!key) throw new Error(`scripts/demo-data.json names ${name}, which the schema's table has not.`);
      return [key, value];
    }),
  ) as Table["$inferInsert"];
}

const PRODUCTS: Record<string, { service_id: string; name: string; unit_price: number }> = demo.products;

/**
 * The demo bookings and orders of one business, numbered from idBaseFor(handle) + 1. An order's items come from
 * the products, and its total (also what was paid, unless stated) from its items.
 */
function demoRows({ businessId, handle, now }: { businessId: string; handle: string; now: Date }) {
  const base = idBaseFor(handle);
  const { currency, timeZone } = demo.business;
  const dateFormat = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
  const midnight = Date.parse(`${dateFormat.format(now).slice(0, 10)}T00:00:00Z`);
  const row = (n: number, fields: object, computed: Record<string, unknown> = {}) => {
    const id = base + n;
    const context = { now, midnight, vars: { handle, id, currency } };
    const values = Object.entries(fields).map(([column, value]) => [column, demoValue(value, context)]);
    return { id, business_id: businessId, ...computed, ...Object.fromEntries(values) };
  };
  const bookingRows = demo.bookings.map((booking, i) =>
    byColumnName(bookings, row(i + 1, { ...demo.bookingDefaults, ...booking })),
  );
  const orderRows = demo.orders.map(({ items: quantities, ...order }, i) => {
    const items = Object.entries(quantities).map(([product, qty]) => {
      const item = PRODUCTS[product];
      if (!item) throw new Error(`scripts/demo-data.json has no product ${product}.`);
      return { service_id: item.service_id, name: item.name, qty, unit_price: item.unit_price };
    });
    const total = Math.round(items.reduce((sum, item) => sum + item.qty * item.unit_price * 100, 0)) / 100;
    return byColumnName(
      orders,
      row(i + 1, { ...demo.orderDefaults, ...order }, { items, total, payment_amount_paid: total }),
    );
  });
  return { bookingRows, orderRows };
}

/** A value as a selected column of an `INSERT ... SELECT`. */
const literal = <T extends Value>(value: T) => sql<T>`${value}`;

/**
 * `INSERT INTO table SELECT ... FROM from WHERE where`: one row per row of `from` that `where` keeps, made of
 * `fields`; drizzle wants every column of the table, in its order, so the others are NULL (an `id` then numbers
 * itself).
 */
export function insertSelect<Table extends SQLiteTable>(
  table: Table,
  fields: Partial<Record<keyof Table["$inferInsert"], SQLWrapper>>,
  from: SQLiteTable,
  where: SQL | undefined,
) {
  const given: Record<string, SQLWrapper | undefined> = fields;
  const selected = Object.fromEntries(
    Object.keys(getTableColumns(table)).map((key) => [key, given[key] ?? sql`null`]),
  ) as Record<string, SQL>;
  return db.insert(table).select(db.select(selected).from(from).where(where) as never);
}

/** The business's unrevoked API keys, counted: the limit of MAX_ACTIVE_KEYS (src/domain/access/api-keys.ts). */
const activeKeysOf = (businessId: string): SQL<number> =>
  sql`(select count(*) from ${apiKeys} where ${apiKeys.businessId} = ${businessId} and ${apiKeys.revokedAt} is null)`;

export type SeedInput = {
  handle: string;
  plan?: Plan;
  ownerEmail: string;
  passwordHash: string;
  apiKey: { keyHash: string; displayPrefix: string };
  now: Date;
};

/** The whole seed as one SQL file, run as one D1 batch. Its last statement reports what the file did. */
export function seedSql({ handle, plan, ownerEmail, passwordHash, apiKey, now }: SeedInput): string {
  const businessId = businessIdFor(handle);
  const nowIso = now.toISOString();
  const name = businessNameFor(handle);
  const { business, knowledgeSource } = demo;
  const { bookingRows, orderRows } = demoRows({ businessId, handle, now });
  const sourceVars = { handle, shortName: handle === DEMO_HANDLE ? business.shortName : name };
  const activeKeys = activeKeysOf(businessId);
  const theBusiness = eq(businesses.id, businessId);
  const statements = [
    `-- Seed for ${handle} (${businessId}), ${nowIso}`,
    db
      .insert(businesses)
      .values({
        id: businessId,
        handle,
        name,
        currency: business.currency,
        country: business.country,
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
    db.insert(owners).values({ businessId, email: ownerEmail, passwordHash, createdAt: nowIso }).onConflictDoNothing(),
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
      apiKeys,
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
    db.insert(bookings).values(bookingRows).onConflictDoNothing(),
    db.insert(orders).values(orderRows).onConflictDoNothing(),
    // No unique key to conflict on: inserted only while the business has no owner source at all.
    insertSelect(
      ownerKnowledgeSources,
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
 * the API key `apiKey`: what the soak and the bench start from.
 */
export async function businessSeedSql(handle: string, apiKey: { keyHash: string; displayPrefix: string }, now: Date) {
  return seedSql({
    handle,
    plan: "business",
    ownerEmail: `owner@${handle}.example`,
    passwordHash: await hashPassword(DEMO_PASSWORD),
    apiKey,
    now,
  });
}

/** The rows of the last statement of a `wrangler d1 execute --json` answer. */
function lastResultRows(stdout: string | undefined): Record<string, unknown>[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(stdout ?? "");
  } catch {
    throw new Error(`wrangler d1 execute printed something other than JSON:\n${stdout?.trim()}`);
  }
  const last = Array.isArray(parsed) ? parsed.at(-1) : undefined;
  const rows = last && typeof last === "object" && "results" in last ? last.results : undefined;
  if (!Array.isArray(rows)) throw new Error(`Unexpected answer from wrangler d1 execute:\n${stdout?.trim()}`);
  return rows;
}

/** Seeds (or reuses) one business and returns its credentials, with a fresh API key. */
export async function seed(options: SeedOptions = {}): Promise<SeedResult> {
  const log = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  const handle = validateHandle(options.handle ?? DEMO_HANDLE);
  const plan = options.plan === undefined ? undefined : validatePlan(options.plan);

  const devVars = ensureDevVars({ log });
  const ownerEmail = `owner@${handle}.example`;
  const apiKey = newApiKey("legacy");
  const sql = seedSql({
    handle,
    plan,
    ownerEmail,
    passwordHash: await hashPassword(DEMO_PASSWORD),
    apiKey,
    now: new Date(),
  });
  log(`Applying the local D1 migrations and seeding ${handle}...`);
  const [row] = lastResultRows(await prepareLocalState({ persistTo: options.persistTo }, [sql]));

  const businessId = businessIdFor(handle);
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
    `Seeded ${handle}: plan ${String(row.plan)}${row.plan_active ? "" : " (lapsed)"}, active API keys: ${String(row.active_keys)}.`,
  );

  const baseUrl = devVars.BASE_URL;
  const runtimeToken = devVars.RUNTIME_TOKEN;
  if (!baseUrl || !runtimeToken) throw new Error(".dev.vars lacks BASE_URL or RUNTIME_TOKEN.");
  return {
    base_url: baseUrl,
    business_id: businessId,
    api_key: apiKey.key,
    owner_email: ownerEmail,
    owner_password: DEMO_PASSWORD,
    runtime_token: runtimeToken,
  };
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

/** True when this file is the program (`node scripts/seed.ts`), not an import. */
function isMain(): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) await main();
