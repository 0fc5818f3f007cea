// `npm run seed --silent [-- --handle <handle> --plan <plan>]` (README.md, Two commands): applies the local
// migrations and seeds one business (owner, a fresh API key, a few bookings and orders, an owner knowledge source),
// idempotently, then prints its credentials as ONE JSON object on stdout. Everything else goes to stderr.
// The demo data is in scripts/demo-data.json; the values the Worker also uses are in src/shared-constants.json.
//
// Two wrangler invocations only: `d1 migrations apply` and one `d1 execute --file`, which runs the whole file as one
// D1 batch (a single transaction). The business id is derived from the handle, so no SELECT has to come first.
import { createHash, pbkdf2Sync, randomBytes } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import constants from "../src/shared-constants.json" with { type: "json" };
import demo from "./demo-data.json" with { type: "json" };
import { ensureDevVars, persistArgs, runWranglerCaptured } from "./wrangler.mjs";

export const DEMO_HANDLE = demo.business.handle;
export const DEMO_PASSWORD = "demo-password";
export const PLANS = constants.PLANS;
export const SEEDED_KEY_LABEL = "Seeded demo key";
/** At most this many active (unrevoked) API keys per business. */
export const MAX_ACTIVE_KEYS = constants.MAX_ACTIVE_KEYS;
export const API_KEY_PREFIX = constants.API_KEY_PREFIX;
const PASSWORD_ITERATIONS = constants.PASSWORD_ITERATIONS;
const HANDLE_PATTERN = /^[a-z0-9-]{3,40}$/;

/** @typedef {(typeof PLANS)[number]} Plan */
/** @typedef {{ handle?: string, plan?: Plan, log?: (message: string) => void }} SeedOptions */
/**
 * @typedef {{
 *   base_url: string, business_id: string, api_key: string, owner_email: string, owner_password: string,
 *   runtime_token: string,
 * }} SeedResult
 */

/** A wrong command line: reported on stderr with exit code 2. */
export class UsageError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "UsageError";
  }
}

const USAGE = `Usage: npm run seed --silent [-- --handle <handle>] [--plan ${PLANS.join("|")}]`;

/**
 * @param {unknown} handle
 * @returns {string}
 */
export function validateHandle(handle) {
  if (typeof handle !== "string" || !HANDLE_PATTERN.test(handle)) {
    throw new UsageError(
      `The handle ${JSON.stringify(handle)} is not valid: it must be 3 to 40 characters of lower-case letters, digits and hyphens.`,
    );
  }
  return handle;
}

/**
 * @param {unknown} plan
 * @returns {Plan}
 */
export function validatePlan(plan) {
  const known = /** @type {readonly unknown[]} */ (PLANS);
  if (!known.includes(plan)) {
    throw new UsageError(`The plan ${JSON.stringify(plan)} is not valid: it must be one of ${PLANS.join(", ")}.`);
  }
  return /** @type {Plan} */ (plan);
}

/**
 * @param {string[]} argv the arguments after the script's path
 * @returns {{ handle?: string, plan?: Plan }}
 */
export function parseSeedArgs(argv) {
  /** @type {{ values: { handle?: string, plan?: string }, positionals: string[] }} */
  let parsed;
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

/** @param {string} text */
function sha256(text) {
  return createHash("sha256").update(text, "utf8").digest();
}

/**
 * A stable id per handle: the first 16 bytes of SHA-256(handle) written as a UUID version 8 (RFC 9562, custom),
 * variant bits 10.
 * @param {string} handle
 */
export function businessIdFor(handle) {
  const bytes = sha256(handle).subarray(0, 16);
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The first of 100 booking and order ids reserved for a handle, so that two seeded businesses never collide:
 * (first 6 hex digits of SHA-256(handle) mod 900000 + 100000) * 100.
 * @param {string} handle
 */
export function idBaseFor(handle) {
  return ((Number.parseInt(sha256(handle).toString("hex").slice(0, 6), 16) % 900_000) + 100_000) * 100;
}

/** @param {string} handle "other-shop" → "Other Shop" */
export function businessNameFor(handle) {
  if (handle === DEMO_HANDLE) return demo.business.name;
  return handle
    .split("-")
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join(" ");
}

/**
 * `pbkdf2-sha256$<iterations>$<salt base64url>$<hash base64url>` (no padding): PBKDF2-HMAC-SHA256 over the 16 raw
 * salt bytes, 32-byte hash.
 * @param {string} password
 */
export function hashPassword(password) {
  const salt = randomBytes(16);
  const hash = pbkdf2Sync(password, salt, PASSWORD_ITERATIONS, 32, "sha256");
  return `pbkdf2-sha256$${PASSWORD_ITERATIONS}$${salt.toString("base64url")}$${hash.toString("base64url")}`;
}

/** `sk_live_` + 32 random bytes in base64url without padding (43 characters). */
export function newApiKey() {
  return API_KEY_PREFIX + randomBytes(32).toString("base64url");
}

/**
 * One SQL literal. Strings have their single quotes doubled; booleans are 0/1.
 * @param {string | number | boolean | null | undefined} value
 * @returns {string}
 */
export function sqlLiteral(value) {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "boolean") return value ? "1" : "0";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`Not a finite number: ${value}`);
    return String(value);
  }
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * `INSERT INTO table (columns) VALUES (...), (...)` over the columns of all the rows; a row without a column has NULL.
 * @param {string} table
 * @param {Record<string, string | number | boolean | null>[]} rows
 * @param {string} [suffix]
 */
function insertRows(table, rows, suffix = "ON CONFLICT DO NOTHING") {
  const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const values = rows.map((row) => `  (${columns.map((column) => sqlLiteral(row[column] ?? null)).join(", ")})`);
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES\n${values.join(",\n")}\n${suffix};`;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** @typedef {string | number | boolean | null} SqlValue */

/**
 * `{name}` in a demo-data.json string replaced by vars[name].
 * @param {string} text
 * @param {Record<string, string | number>} vars
 */
function fill(text, vars) {
  return text.replace(/\{(\w+)\}/g, (_, name) => {
    if (!(name in vars)) throw new Error(`scripts/demo-data.json uses {${name}}, which the seed does not know.`);
    return String(vars[name]);
  });
}

/**
 * One demo-data.json value as a column value: `{ days: n }` is the date n days from today (`midnight`, today's date in
 * the business's time zone as UTC midnight), `{ hours: n }` the instant n hours from `now`, and strings are filled in.
 * @param {unknown} value
 * @param {{ now: Date, midnight: number, vars: Record<string, string | number> }} context
 * @returns {SqlValue}
 */
function demoValue(value, { now, midnight, vars }) {
  if (typeof value === "string") return fill(value, vars);
  if (value === null || typeof value === "number" || typeof value === "boolean") return value;
  const { days, hours } = /** @type {{ days?: unknown, hours?: unknown }} */ (value);
  if (typeof days === "number") return new Date(midnight + days * DAY_MS).toISOString().slice(0, 10);
  if (typeof hours === "number") return new Date(now.getTime() + hours * HOUR_MS).toISOString();
  throw new Error(`scripts/demo-data.json has a value the seed does not understand: ${JSON.stringify(value)}`);
}

/** @type {Record<string, { service_id: string, name: string, unit_price: number }>} */
const PRODUCTS = demo.products;

/**
 * The demo bookings and orders of one business, numbered from idBaseFor(handle) + 1. An order's items come from
 * the products, and its total (also what was paid, unless stated) from its items.
 * @param {{ businessId: string, handle: string, now: Date }} context
 */
function demoRows({ businessId, handle, now }) {
  const base = idBaseFor(handle);
  const { currency, timeZone } = demo.business;
  const dateFormat = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" });
  const midnight = Date.parse(`${dateFormat.format(now).slice(0, 10)}T00:00:00Z`);
  /**
   * @param {number} n
   * @param {object} fields from demo-data.json
   * @param {Record<string, SqlValue>} [computed]
   * @returns {Record<string, SqlValue>}
   */
  const row = (n, fields, computed = {}) => {
    const id = base + n;
    const context = { now, midnight, vars: { handle, id, currency } };
    const values = Object.entries(fields).map(([column, value]) => [column, demoValue(value, context)]);
    return { id, business_id: businessId, ...computed, ...Object.fromEntries(values) };
  };
  const bookings = demo.bookings.map((booking, i) => row(i + 1, { ...demo.bookingDefaults, ...booking }));
  const orders = demo.orders.map(({ items: quantities, ...order }, i) => {
    const items = Object.entries(quantities).map(([product, qty]) => {
      const item = PRODUCTS[product];
      if (!item) throw new Error(`scripts/demo-data.json has no product ${product}.`);
      return { service_id: item.service_id, name: item.name, qty, unit_price: item.unit_price };
    });
    const total = Math.round(items.reduce((sum, item) => sum + item.qty * item.unit_price * 100, 0)) / 100;
    const computed = { items: JSON.stringify(items), total, payment_amount_paid: total };
    return row(i + 1, { ...demo.orderDefaults, ...order }, computed);
  });
  return { bookings, orders };
}

/**
 * The whole seed as one SQL file, run as one D1 batch. Its last statement reports what the file did.
 * @param {{ handle: string, plan?: Plan, ownerEmail: string, passwordHash: string,
 *   apiKey: { hash: string, displayPrefix: string }, now: Date }} input
 */
export function seedSql({ handle, plan, ownerEmail, passwordHash, apiKey, now }) {
  const businessId = businessIdFor(handle);
  const nowIso = now.toISOString();
  const name = businessNameFor(handle);
  const { business, knowledgeSource } = demo;
  const { bookings, orders } = demoRows({ businessId, handle, now });
  const sourceVars = { handle, shortName: handle === DEMO_HANDLE ? business.shortName : name };
  const id = sqlLiteral(businessId);
  const activeKeys = `(SELECT count(*) FROM api_keys WHERE business_id = ${id} AND revoked_at IS NULL)`;
  const statements = [
    `-- Seed for ${handle} (${businessId}), ${nowIso}`,
    insertRows("businesses", [
      {
        id: businessId,
        handle,
        name,
        currency: business.currency,
        country: business.country,
        time_zone: business.timeZone,
        plan: plan ?? business.plan,
        plan_active: true,
        // The owner's own settings, which the Secretary answers from first (GET /internal/v1/businesses/{id}/context).
        settings: JSON.stringify(business.settings),
        created_at: nowIso,
        updated_at: nowIso,
      },
    ]),
    // An explicit --plan also applies to a business that already exists.
    plan === undefined
      ? ""
      : `UPDATE businesses SET plan = ${sqlLiteral(plan)}, plan_active = 1, updated_at = ${sqlLiteral(nowIso)}
WHERE id = ${id} AND (plan <> ${sqlLiteral(plan)} OR plan_active <> 1);`,
    insertRows("owners", [
      { business_id: businessId, email: ownerEmail, password_hash: passwordHash, created_at: nowIso },
    ]),
    // Keep to the limit of active keys: make room by revoking the oldest seeded key...
    `UPDATE api_keys SET revoked_at = ${sqlLiteral(nowIso)}
WHERE id = (
  SELECT id FROM api_keys
  WHERE business_id = ${id} AND revoked_at IS NULL AND label = ${sqlLiteral(SEEDED_KEY_LABEL)}
  ORDER BY created_at, id LIMIT 1
) AND ${activeKeys} >= ${MAX_ACTIVE_KEYS};`,
    // ...and add the new key only when there is room (there is none when every active key is the owner's own).
    `INSERT INTO api_keys (business_id, key_hash, display_prefix, label, created_at)
SELECT ${id}, ${sqlLiteral(apiKey.hash)}, ${sqlLiteral(apiKey.displayPrefix)}, ${sqlLiteral(SEEDED_KEY_LABEL)}, ${sqlLiteral(nowIso)}
WHERE ${activeKeys} < ${MAX_ACTIVE_KEYS};`,
    insertRows("bookings", bookings),
    insertRows("orders", orders),
    // No unique key to conflict on: inserted only while the business has no owner source at all.
    `INSERT INTO owner_knowledge_sources (business_id, kind, title, location, created_at)
SELECT ${id}, ${sqlLiteral(knowledgeSource.kind)}, ${sqlLiteral(fill(knowledgeSource.title, sourceVars))}, ${sqlLiteral(fill(knowledgeSource.location, sourceVars))}, ${sqlLiteral(nowIso)}
WHERE NOT EXISTS (SELECT 1 FROM owner_knowledge_sources WHERE business_id = ${id});`,
    `SELECT b.id AS business_id, b.plan AS plan, b.plan_active AS plan_active,
  (SELECT email FROM owners WHERE business_id = b.id) AS owner_email,
  (SELECT count(*) FROM api_keys WHERE key_hash = ${sqlLiteral(apiKey.hash)}) AS key_stored,
  ${activeKeys} AS active_keys
FROM businesses b WHERE b.handle = ${sqlLiteral(handle)};`,
  ];
  return `${statements.filter(Boolean).join("\n\n")}\n`;
}

/**
 * The rows of the last statement of a `wrangler d1 execute --json` answer.
 * @param {string} stdout
 * @returns {Record<string, unknown>[]}
 */
function lastResultRows(stdout) {
  /** @type {unknown} */
  let parsed;
  try {
    parsed = JSON.parse(stdout);
  } catch {
    throw new Error(`wrangler d1 execute printed something other than JSON:\n${stdout.trim()}`);
  }
  const last = Array.isArray(parsed) ? parsed.at(-1) : undefined;
  const rows = last && typeof last === "object" && "results" in last ? last.results : undefined;
  if (!Array.isArray(rows)) throw new Error(`Unexpected answer from wrangler d1 execute:\n${stdout.trim()}`);
  return rows;
}

/**
 * Seeds (or reuses) one business and returns its credentials, with a fresh API key.
 * @param {SeedOptions} [options]
 * @returns {Promise<SeedResult>}
 */
export async function seed(options = {}) {
  const log = options.log ?? ((message) => process.stderr.write(`${message}\n`));
  const handle = validateHandle(options.handle ?? DEMO_HANDLE);
  const plan = options.plan === undefined ? undefined : validatePlan(options.plan);

  const devVars = ensureDevVars({ log });

  log("Applying the local D1 migrations...");
  await runWranglerCaptured(["d1", "migrations", "apply", "DB", "--local", ...persistArgs()]);

  const ownerEmail = `owner@${handle}.example`;
  const apiKey = newApiKey();
  const sql = seedSql({
    handle,
    plan,
    ownerEmail,
    passwordHash: hashPassword(DEMO_PASSWORD),
    apiKey: {
      hash: createHash("sha256").update(apiKey, "utf8").digest("hex"),
      displayPrefix: apiKey.slice(0, 12),
    },
    now: new Date(),
  });

  const directory = mkdtempSync(join(tmpdir(), "secretary-seed-"));
  /** @type {Record<string, unknown>[]} */
  let rows;
  try {
    const file = join(directory, "seed.sql");
    writeFileSync(file, sql, { mode: 0o600 });
    log(`Seeding ${handle}...`);
    const output = await runWranglerCaptured([
      "d1",
      "execute",
      "DB",
      "--local",
      ...persistArgs(),
      "--file",
      file,
      "--json",
    ]);
    rows = lastResultRows(output.stdout);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }

  const [row] = rows;
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
    api_key: apiKey,
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

/** True when this file is the program (`node scripts/seed.mjs`), not an import. */
function isMain() {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return realpathSync(entry) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) await main();
