// `npm run seed --silent [-- --handle <handle> --plan <plan>]` (DESIGN.md, "Local development"): applies the local
// migrations and seeds one business (owner, a fresh API key, a few bookings and orders, an owner knowledge source),
// idempotently, then prints its credentials as ONE JSON object on stdout. Everything else goes to stderr.
//
// Two wrangler invocations only: `d1 migrations apply` and one `d1 execute --file`, which runs the whole file as one
// D1 batch (a single transaction). The business id is derived from the handle, so no SELECT has to come first.
import { createHash, pbkdf2Sync, randomBytes } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ensureDevVars, runWranglerCaptured } from "./wrangler.mjs";

export const DEMO_HANDLE = "bella-hair";
export const DEMO_PASSWORD = "demo-password";
export const PLANS = /** @type {const} */ (["pro", "business", "free"]);
export const SEEDED_KEY_LABEL = "Seeded demo key";
/** At most this many active (unrevoked) API keys per business. */
export const MAX_ACTIVE_KEYS = 10;
export const API_KEY_PREFIX = "sk_live_";
const PASSWORD_ITERATIONS = 100_000;
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

const USAGE = "Usage: npm run seed --silent [-- --handle <handle>] [--plan pro|business|free]";

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
  if (handle === DEMO_HANDLE) return "Bella Hair Studio";
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
 * `INSERT INTO table (columns) VALUES (...), (...)` from rows that all have the same keys, in the same order.
 * @param {string} table
 * @param {Record<string, string | number | boolean | null>[]} rows
 * @param {string} [suffix]
 */
function insertRows(table, rows, suffix = "ON CONFLICT DO NOTHING") {
  const columns = Object.keys(/** @type {Record<string, unknown>} */ (rows[0]));
  const values = rows.map((row) => {
    const keys = Object.keys(row);
    if (keys.join() !== columns.join()) throw new Error(`Rows for ${table} have different columns.`);
    return `  (${columns.map((column) => sqlLiteral(row[column] ?? null)).join(", ")})`;
  });
  return `INSERT INTO ${table} (${columns.join(", ")}) VALUES\n${values.join(",\n")}\n${suffix};`;
}

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/**
 * Today's date in a time zone, and a helper for the dates around it (bookings are in the business's time zone).
 * @param {Date} now
 * @param {string} timeZone
 */
function calendar(now, timeZone) {
  const today = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
    .format(now)
    .slice(0, 10);
  const midnight = Date.parse(`${today}T00:00:00Z`);
  /** @param {number} days */
  return (days) => new Date(midnight + days * DAY_MS).toISOString().slice(0, 10);
}

/**
 * @param {{ businessId: string, handle: string, currency: string, timeZone: string, now: Date }} context
 * @returns {Record<string, string | number | boolean | null>[]}
 */
function demoBookings({ businessId, handle, currency, timeZone, now }) {
  const base = idBaseFor(handle);
  const day = calendar(now, timeZone);
  const ago = (/** @type {number} */ hours) => new Date(now.getTime() - hours * HOUR_MS).toISOString();
  /**
   * @param {number} n
   * @param {Record<string, string | number | boolean | null>} fields
   */
  const booking = (n, fields) => {
    const id = base + n;
    const withLinks = fields.links !== false;
    return {
      id,
      business_id: businessId,
      status: null,
      date: null,
      time: null,
      duration_minutes: null,
      service_id: null,
      service_name: null,
      service_price: null,
      client_name: null,
      client_email: null,
      client_phone: null,
      payment_status: "unpaid",
      payment_amount_paid: 0,
      payment_agreed_amount: null,
      payment_currency: currency,
      payment_reference: null,
      location: null,
      notes: null,
      reschedule_count: 0,
      original_date: null,
      original_time: null,
      reschedule_link: withLinks ? `https://book.example/${handle}/bookings/${id}/reschedule` : null,
      cancel_link: withLinks ? `https://book.example/${handle}/bookings/${id}/cancel` : null,
      conversation_id: null,
      created_at: null,
      ...Object.fromEntries(Object.entries(fields).filter(([key]) => key !== "links")),
    };
  };
  return [
    booking(1, {
      status: "completed",
      date: day(-7),
      time: "10:00",
      duration_minutes: 45,
      service_id: "cut-and-blow-dry",
      service_name: "Cut & blow-dry",
      service_price: "€45",
      client_name: "Emma de Vries",
      client_email: "emma.devries@example.com",
      client_phone: "+31 6 12345678",
      payment_status: "paid",
      payment_amount_paid: 45,
      payment_reference: `PAY-${base + 1}`,
      conversation_id: `conv_${handle}_0001`,
      created_at: ago(24 * 12),
    }),
    booking(2, {
      status: "no_show",
      date: day(-3),
      time: "14:30",
      duration_minutes: 30,
      service_id: "beard-trim",
      service_name: "Beard trim",
      service_price: "€20",
      client_name: "Daan Jansen",
      client_email: "daan.jansen@example.com",
      client_phone: "+31 6 23456789",
      notes: "Did not answer the reminder call.",
      created_at: ago(24 * 6 + 3),
    }),
    booking(3, {
      status: "cancelled",
      date: day(2),
      time: "11:00",
      duration_minutes: 90,
      service_id: "full-colour",
      service_name: "Full colour",
      service_price: "€85",
      client_name: "Sophie Bakker",
      client_email: "sophie.bakker@example.com",
      client_phone: null,
      payment_status: "refunded",
      payment_amount_paid: 0,
      payment_reference: `PAY-${base + 3}`,
      notes: "Cancelled by the client: 'can't make it, sorry!'",
      links: false,
      created_at: ago(24 * 4),
    }),
    booking(4, {
      status: "confirmed",
      date: day(1),
      time: "09:30",
      duration_minutes: 150,
      service_id: "balayage",
      service_name: "Balayage",
      service_price: "from €120",
      client_name: "Lotte Visser",
      client_email: "lotte.visser@example.com",
      client_phone: "+31 6 34567890",
      payment_status: "deposit_paid",
      payment_amount_paid: 30,
      payment_agreed_amount: 130,
      payment_reference: `PAY-${base + 4}`,
      notes: "Long hair, wants a natural look.",
      reschedule_count: 1,
      original_date: day(3),
      original_time: "16:00",
      conversation_id: `conv_${handle}_0004`,
      created_at: ago(24 * 5 + 7),
    }),
    booking(5, {
      status: "pending",
      date: day(5),
      time: "15:00",
      duration_minutes: 30,
      service_id: "kids-cut",
      service_name: "Kids cut",
      service_price: "€25",
      client_name: "Noah Smit",
      client_email: null,
      client_phone: "+31 6 45678901",
      notes: "Asked on WhatsApp; waiting for the owner to confirm.",
      conversation_id: `conv_${handle}_0005`,
      created_at: ago(2),
    }),
    booking(6, {
      status: "confirmed",
      date: day(8),
      time: "13:00",
      duration_minutes: 60,
      service_id: "home-visit-cut",
      service_name: "Haircut at home",
      service_price: "€65",
      client_name: "Anna Mulder",
      client_email: "anna.mulder@example.com",
      client_phone: "+31 6 56789012",
      payment_status: "paid",
      payment_amount_paid: 65,
      payment_reference: `PAY-${base + 6}`,
      location: "Prinsengracht 263, 1016 GV Amsterdam",
      created_at: ago(24 + 5),
    }),
  ];
}

/** @typedef {{ service_id: string, name: string, qty: number, unit_price: number }} OrderItem */

/** @type {Record<string, OrderItem>} */
const PRODUCTS = {
  shampoo: { service_id: "repair-shampoo", name: "Repair shampoo 250 ml", qty: 1, unit_price: 18.5 },
  oil: { service_id: "argan-oil", name: "Argan hair oil", qty: 1, unit_price: 24 },
  giftCard: { service_id: "gift-card-50", name: "Gift card €50", qty: 1, unit_price: 50 },
  comb: { service_id: "wooden-comb", name: "Wooden comb", qty: 1, unit_price: 9.95 },
};

/**
 * @param {{ businessId: string, handle: string, now: Date }} context
 * @returns {Record<string, string | number | boolean | null>[]}
 */
function demoOrders({ businessId, handle, now }) {
  const base = idBaseFor(handle);
  const at = (/** @type {number} */ hours) => new Date(now.getTime() + hours * HOUR_MS).toISOString();
  /**
   * @param {number} n
   * @param {[OrderItem, number][]} lines item and quantity
   * @param {Record<string, string | number | boolean | null>} fields
   */
  const order = (n, lines, fields) => {
    const items = lines.map(([item, qty]) => ({ ...item, qty }));
    const total = Math.round(items.reduce((sum, item) => sum + item.qty * item.unit_price * 100, 0)) / 100;
    return {
      id: base + n,
      business_id: businessId,
      status: null,
      items: JSON.stringify(items),
      total,
      pay_on_delivery: false,
      fulfillment_type: "pickup",
      delivery_address: null,
      delivery_notes: null,
      tracking_number: null,
      carrier: null,
      ready_at: null,
      estimated_ready_at: null,
      tracking_url: null,
      client_name: null,
      client_email: null,
      client_phone: null,
      payment_status: "paid",
      payment_amount_paid: total,
      notes: null,
      conversation_id: null,
      created_at: null,
      ...fields,
    };
  };
  return [
    order(
      1,
      [
        [PRODUCTS.shampoo, 2],
        [PRODUCTS.comb, 1],
      ],
      {
        status: "pending",
        pay_on_delivery: true,
        client_name: "Emma de Vries",
        client_email: "emma.devries@example.com",
        client_phone: "+31 6 12345678",
        payment_status: "unpaid",
        payment_amount_paid: 0,
        notes: "Will pick up after her next appointment.",
        conversation_id: `conv_${handle}_0101`,
        created_at: at(-1),
      },
    ),
    order(2, [[PRODUCTS.oil, 1]], {
      status: "preparing",
      estimated_ready_at: at(3),
      client_name: "Lotte Visser",
      client_email: "lotte.visser@example.com",
      created_at: at(-5),
    }),
    order(3, [[PRODUCTS.giftCard, 2]], {
      status: "ready_for_pickup",
      ready_at: at(-2),
      client_name: "Sophie Bakker",
      client_phone: "+31 6 67890123",
      created_at: at(-26),
    }),
    order(
      4,
      [
        [PRODUCTS.shampoo, 1],
        [PRODUCTS.oil, 1],
      ],
      {
        status: "out_for_delivery",
        fulfillment_type: "delivery",
        delivery_address: "Keizersgracht 123, 1015 CJ Amsterdam",
        delivery_notes: "Ring twice; third floor.",
        tracking_number: "3SBELL0000001",
        carrier: "PostNL",
        tracking_url: `https://track.example/${handle}/3SBELL0000001`,
        client_name: "Anna Mulder",
        client_email: "anna.mulder@example.com",
        client_phone: "+31 6 56789012",
        created_at: at(-30),
      },
    ),
    order(5, [[PRODUCTS.comb, 3]], {
      status: "fulfilled",
      ready_at: at(-24 * 3),
      client_name: "Daan Jansen",
      client_email: "daan.jansen@example.com",
      created_at: at(-24 * 4),
    }),
    order(6, [[PRODUCTS.oil, 2]], {
      status: "cancelled",
      client_name: "Noah Smit",
      client_phone: "+31 6 45678901",
      payment_status: "refunded",
      payment_amount_paid: 0,
      notes: "Out of stock; refunded.",
      created_at: at(-24 * 2),
    }),
  ];
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
  const business = { currency: "EUR", country: "NL", timeZone: "Europe/Amsterdam" };
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
        plan: plan ?? "pro",
        plan_active: true,
        // The owner's own settings, which the Secretary answers from first (GET /internal/v1/businesses/{id}/context).
        settings: JSON.stringify({
          opening_hours: "Tuesday to Saturday 09:00-18:00; closed Sunday and Monday",
          services: "Haircut €35 (45 min), colour €80 (2 h), haircut at home €65 (1 h)",
          address: "Prinsengracht 100, Amsterdam",
          phone: "+31 20 123 4567",
        }),
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
    insertRows(
      "bookings",
      demoBookings({ businessId, handle, currency: business.currency, timeZone: business.timeZone, now }),
    ),
    insertRows("orders", demoOrders({ businessId, handle, now })),
    // No unique key to conflict on: inserted only while the business has no owner source at all.
    `INSERT INTO owner_knowledge_sources (business_id, kind, title, location, created_at)
SELECT ${id}, 'website', ${sqlLiteral(`${handle === DEMO_HANDLE ? "Bella Hair" : name} website`)}, ${sqlLiteral(`https://${handle}.example`)}, ${sqlLiteral(nowIso)}
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
  await runWranglerCaptured(["d1", "migrations", "apply", "DB", "--local"]);

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
    const output = await runWranglerCaptured(["d1", "execute", "DB", "--local", "--file", file, "--json"]);
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
