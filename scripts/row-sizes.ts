// `npm run measure:rows`: the bytes one row of each growing table takes in SQLite as D1 stores it, the row and its
// index entries together (docs/scaling.md). A local D1 of its own (the project's migrations applied through
// `wrangler d1 migrations apply --local` on a temporary `--persist-to` folder, as `npm run bench` does), one business
// with an endpoint and an action, then for each kind N rows of realistic values inserted by one INSERT ... SELECT over
// a recursive CTE; the pages in use (`PRAGMA page_count` − `PRAGMA freelist_count`, × `PRAGMA page_size`, read from the
// database's SQLite file with node:sqlite) before and after, divided by N. Then how long the retention's DELETE of a
// chunk of events holds D1 at the worst cascade. Options: `--rows N` (10,000), `--keep` (leave the folder and print
// where it is).
import { readdirSync, writeFileSync } from "node:fs";
import { arch, cpus, totalmem } from "node:os";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import bookingSample from "../test/fixtures/booking.json" with { type: "json" };
import { cleanupOnExit, configCopy, log, makeTempDir, removeDir } from "./local-worker.ts";
import { db, schema, sqlText } from "./service.ts";
import { PROJECT_ROOT, runWranglerCaptured } from "./wrangler.ts";

const argv = process.argv.slice(2);
const rowsOption = argv.indexOf("--rows");
const ROWS = rowsOption >= 0 ? Number(argv[rowsOption + 1]) : 10_000;
const KEEP = argv.includes("--keep");
if (!Number.isInteger(ROWS) || ROWS < 100) throw new Error("--rows takes a whole number of at least 100.");

/** A business id as the seed makes them (a UUID), a handle and a name of ordinary length. */
const BUSINESS = { id: "5b0e6f1c-3d2a-8c4e-9a7b-1f2e3d4c5b6a", handle: "noor-barbers", name: "Noor's Barbers" };
const NOW = "2026-11-23T09:00:00.000Z";

const quote = (text: string) => `'${text.replaceAll("'", "''")}'`;

/**
 * A stored `booking.created` envelope (src/domain/webhooks/outbox/write.ts: `evt_` + 16 random bytes in base64url, the
 * business, the booking of test/fixtures/booking.json with an id), its id left as a placeholder of the same length.
 */
function bookingCreatedEnvelope() {
  const { $comment: _, ...sample } = bookingSample;
  return JSON.stringify({
    id: "evt_XXXXXXXXXXXXXXXXXXXXXX",
    event: "booking.created",
    created_at: NOW,
    business: BUSINESS,
    data: { booking: { id: 104_217, ...sample } },
  });
}

/** The rows that the measured ones point at: the business, 20 webhook endpoints and one action (drizzle's inserts). */
function fixturesSql() {
  const { actions, businesses, webhookEndpoints } = schema;
  const business = db.insert(businesses).values({
    ...BUSINESS,
    currency: "EUR",
    country: "NL",
    timeZone: "Europe/Amsterdam",
    plan: "business",
    planActive: true,
    settings: {},
    createdAt: NOW,
    updatedAt: NOW,
  });
  const endpoints = db.insert(webhookEndpoints).values(
    Array.from({ length: 20 }, (_, i) => ({
      businessId: BUSINESS.id,
      url: `https://hooks.partner.example/secretary/${i + 1}`,
      events: ["*"],
      description: "Bookings to the CRM",
      secret: `whsec_${String(i + 1).padStart(43, "0")}`,
      apiKeyId: 1,
      createdAt: NOW,
    })),
  );
  const action = db.insert(actions).values({
    businessId: BUSINESS.id,
    name: "check_stock",
    title: "Check stock",
    description: "Looks up whether a product is in stock",
    url: "https://api.partner.example/secretary/stock",
    parameters: {
      type: "object",
      properties: { product: { type: "string", description: "Product name" } },
      required: ["product"],
    },
    secret: `whsec_${"0".repeat(43)}`,
    enabled: true,
    apiKeyId: 1,
    createdAt: NOW,
    updatedAt: NOW,
  });
  return [business, endpoints, action].map(sqlText).join("\n");
}

/** `n(i)` from 1 to ROWS, for an INSERT ... SELECT. */
const numbers = `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${ROWS})`;
/** A distinct ISO timestamp per row, a second apart (the indexes on created_at see distinct keys). */
const isoOf = (column: string) => `strftime('%Y-%m-%dT%H:%M:%fZ', '2026-10-25', '+' || ${column} || ' seconds')`;
/** 22 characters of an id per row, as long as 16 random bytes in base64url. */
const id22 = (column: string) => `printf('%022d', ${column})`;

/**
 * Each measured kind: what one row stands for, and the INSERT of ROWS of them. Deliveries and attempts point at the
 * events and deliveries inserted before them, one each, so every foreign key holds. Series of ROWS rows are
 * SQL's own (a recursive CTE), so that the file stays small.
 */
const KINDS: Array<{ kind: string; table: string; what: string; sql: string }> = [
  {
    kind: "event",
    table: "events",
    what: `a booking.created envelope of ${bookingCreatedEnvelope().length} bytes (test/fixtures/booking.json)`,
    sql: `INSERT INTO events (id, business_id, type, envelope, created_at, audience) ${numbers}
      SELECT 'evt_' || ${id22("i")}, ${quote(BUSINESS.id)}, 'booking.created',
      replace(${quote(bookingCreatedEnvelope())}, 'evt_XXXXXXXXXXXXXXXXXXXXXX', 'evt_' || ${id22("i")}),
      ${isoOf("i")}, NULL FROM n;`,
  },
  {
    kind: "delivery",
    table: "webhook_deliveries",
    what: "delivered on its first attempt (every timestamp set, no lease)",
    sql: `INSERT INTO webhook_deliveries (business_id, event_id, endpoint_id, status, attempt_count, next_attempt_at,
      enqueued_at, lease_until, completed_at, created_at) ${numbers}
      SELECT ${quote(BUSINESS.id)}, 'evt_' || ${id22("i")}, 1 + (i % 20), 'delivered', 1, ${isoOf("i")},
      ${isoOf("i")}, NULL, ${isoOf("i")}, ${isoOf("i")} FROM n;`,
  },
  {
    kind: "attempt",
    table: "delivery_attempts",
    what: "a 2xx answer (status code and duration, no error text)",
    sql: `INSERT INTO delivery_attempts (delivery_id, attempted_at, status_code, error, duration_ms) ${numbers}
      SELECT i, ${isoOf("i")}, 200, NULL, 40 + (i % 200) FROM n;`,
  },
  {
    kind: "failed attempt",
    table: "delivery_attempts",
    what: "a timeout: no status code, the error text 'timed out after 10 s'",
    sql: `INSERT INTO delivery_attempts (delivery_id, attempted_at, status_code, error, duration_ms) ${numbers}
      SELECT i, ${isoOf("i")}, NULL, 'timed out after 10 s', 10000 FROM n;`,
  },
  {
    kind: "action call",
    table: "action_calls",
    what: "a success with 80 bytes of arguments",
    sql: `INSERT INTO action_calls (action_id, business_id, conversation_id, message_id, channel, status, arguments,
      http_status, error, duration_ms, created_at) ${numbers}
      SELECT 1, ${quote(BUSINESS.id)}, 'conv_' || ${id22("i")}, 'msg_' || ${id22("i")}, 'whatsapp', 'success',
      '{"product":"Beard oil, cedar and bergamot 50 ml","quantity":2,"size":"50"}', 200, NULL, 120 + (i % 300),
      ${isoOf("i")} FROM n;`,
  },
  {
    kind: "booking",
    table: "bookings",
    what: "test/fixtures/booking.json as the platform's report stores it",
    sql: `INSERT INTO bookings (id, business_id, status, date, time, duration_minutes, service_id, service_name,
      service_price, client_name, client_email, client_phone, payment_status, payment_amount_paid,
      payment_agreed_amount, payment_currency, payment_reference, location, notes, reschedule_count, original_date,
      original_time, reschedule_link, cancel_link, conversation_id, created_at, updated_at, report_token) ${numbers}
      SELECT 100000 + i, ${quote(BUSINESS.id)}, 'confirmed', date('2026-12-01', '+' || (i % 60) || ' days'),
      printf('%02d:%02d', 9 + (i % 9), (i % 4) * 15), 30, 'svc_1', 'Beard trim', '€20', 'Noor',
      'noor@example.com', NULL, 'unpaid', 0, NULL, 'EUR', NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL,
      ${isoOf("i")}, ${isoOf("i")}, 'rpt_' || printf('%016d', i) FROM n;`,
  },
  {
    kind: "order",
    table: "orders",
    what: "two items, delivery address, client",
    sql: `INSERT INTO orders (id, business_id, status, items, total, pay_on_delivery, fulfillment_type,
      delivery_address, delivery_notes, tracking_number, carrier, ready_at, estimated_ready_at, tracking_url,
      client_name, client_email, client_phone, payment_status, payment_amount_paid, notes, conversation_id,
      created_at, updated_at, report_token) ${numbers}
      SELECT 200000 + i, ${quote(BUSINESS.id)}, 'pending',
      '[{"name":"Beard oil 50 ml","quantity":2,"unit_price":14.5},{"name":"Comb","quantity":1,"unit_price":6}]',
      35, 0, 'delivery', 'Keizersgracht 123, 1015 CJ Amsterdam', NULL, NULL, NULL, NULL, NULL, NULL, 'Noor',
      'noor@example.com', '+31612345678', 'paid', 35, NULL, NULL, ${isoOf("i")}, ${isoOf("i")},
      'rpt_' || printf('%016d', i) FROM n;`,
  },
];

/**
 * @param where `-c <config> --persist-to <state>`
 */
async function execute(where: string[], sql: string) {
  const { stdout } = await runWranglerCaptured([
    "d1",
    "execute",
    "DB",
    "--local",
    ...where,
    "--json",
    "--command",
    sql,
  ]);
  return JSON.parse(stdout) as Array<{ results: Array<Record<string, unknown>>; meta: { duration: number } }>;
}

/**
 * The bytes of the pages in use in the D1 database's SQLite file under `state` (D1 refuses `PRAGMA page_count` to its
 * clients, so the file is opened read-only from Node once wrangler has exited; its write-ahead log is read too).
 * @param state the `--persist-to` folder
 */
function bytesInUse(state: string) {
  const folder = join(state, "v3", "d1", "miniflare-D1DatabaseObject");
  const files = readdirSync(folder).filter((name) => name.endsWith(".sqlite") && name !== "metadata.sqlite");
  if (files.length !== 1)
    throw new Error(`Expected one D1 database in ${folder}, found ${files.join(", ") || "none"}.`);
  const database = new DatabaseSync(join(folder, files[0] ?? ""), { readOnly: true });
  try {
    const pragma = (pragma: string) => Number(Object.values(database.prepare(`PRAGMA ${pragma}`).get() ?? {})[0]);
    const pageSize = pragma("page_size");
    return { bytes: (pragma("page_count") - pragma("freelist_count")) * pageSize, pageSize };
  } finally {
    database.close();
  }
}

const thousands = (value: number) => value.toLocaleString("en-US");

/**
 * The worst an event takes with it: a delivery to each of a business's 20 endpoints at most, each with its 6 attempts.
 */
const CASCADE = { endpoints: 20, attempts: 6 };

/**
 * How long the retention's DELETE of one chunk of events holds D1 when every event takes the most rows with it by the
 * cascade (src/domain/operations/retention.ts, EVENT_CHUNK): `count` events from 2020, their deliveries and attempts, then the
 * retention's statement for a chunk of `chunk`, timed by D1 itself (`meta.duration`).
 */
async function cascadeChunk(where: string[], chunk: number) {
  const prefix = `evt_old${chunk}_`;
  await execute(
    where,
    `INSERT INTO events (id, business_id, type, envelope, created_at) WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL
      SELECT i + 1 FROM n WHERE i < ${chunk}) SELECT '${prefix}' || i, ${quote(BUSINESS.id)}, 'booking.created',
      ${quote(bookingCreatedEnvelope())}, '2020-01-01T00:00:00.000Z' FROM n;
    INSERT INTO webhook_deliveries (business_id, event_id, endpoint_id, status, attempt_count, next_attempt_at,
      created_at) SELECT ${quote(BUSINESS.id)}, events.id, endpoint.id, 'failed', ${CASCADE.attempts}, events.created_at,
      events.created_at FROM events, webhook_endpoints AS endpoint WHERE events.id LIKE '${prefix}%';
    INSERT INTO delivery_attempts (delivery_id, attempted_at, status_code, duration_ms) WITH RECURSIVE
      n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${CASCADE.attempts}) SELECT delivery.id,
      delivery.created_at, 500, 10000 FROM webhook_deliveries AS delivery, n WHERE delivery.event_id LIKE '${prefix}%';`,
  );
  const rowsNow = async () => {
    const [counted] = await execute(
      where,
      "SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM webhook_deliveries) + (SELECT count(*) FROM delivery_attempts) AS n;",
    );
    return Number(counted?.results[0]?.n);
  };
  const before = await rowsNow();
  // The statement of retentionDeletions().events, as drizzle renders it.
  const [result] = await execute(
    where,
    `DELETE FROM events WHERE rowid IN (SELECT rowid FROM events WHERE created_at < '2021-01-01T00:00:00.000Z'
      ORDER BY created_at LIMIT ${chunk});`,
  );
  return { chunk, rows: before - (await rowsNow()), ms: Number(result?.meta.duration) };
}

async function main() {
  const cleanup = cleanupOnExit();
  const directory = makeTempDir("secretary-row-sizes-");
  if (!KEEP) cleanup.add(() => removeDir(directory));
  try {
    const configPath = join(directory, "wrangler.toml");
    writeFileSync(configPath, configCopy(join(PROJECT_ROOT, "wrangler.toml")));
    const state = join(directory, "state");
    const where = ["-c", configPath, "--persist-to", state];
    log(`Applying the migrations to a local D1 in ${directory} ...`);
    await runWranglerCaptured(["d1", "migrations", "apply", "DB", "--local", ...where]);
    await execute(where, fixturesSql());

    const results: Array<{ kind: string; table: string; what: string; perRow: number }> = [];
    let pageSize = 0;
    for (const { kind, table, what, sql } of KINDS) {
      log(`Inserting ${thousands(ROWS)} rows: ${kind} ...`);
      const before = bytesInUse(state);
      await execute(where, sql);
      const after = bytesInUse(state);
      pageSize = after.pageSize;
      results.push({ kind, table, what, perRow: Math.round((after.bytes - before.bytes) / ROWS) });
    }

    const chunks = [];
    for (const chunk of [100, 500]) {
      log(`Deleting a chunk of ${chunk} events with their deliveries and attempts ...`);
      chunks.push(await cascadeChunk(where, chunk));
    }

    const cpu = cpus()[0]?.model.trim() ?? "unknown CPU";
    const lines = [
      `Bytes per row in local D1 (SQLite, page size ${pageSize}): the row and its index entries, ${thousands(ROWS)} rows of each kind.`,
      `${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} × ${cpu} (${arch()}), ${Math.round(totalmem() / 2 ** 30)} GiB.`,
      "",
      "| Kind | Table | Bytes per row | Row |",
      "|---|---|---|---|",
      ...results.map(({ kind, table, what, perRow }) => `| ${kind} | ${table} | ${thousands(perRow)} | ${what} |`),
      "",
      `The retention's DELETE of a chunk of events, each with ${CASCADE.endpoints} deliveries of ${CASCADE.attempts} attempts (D1's own duration):`,
      "",
      "| Events in the chunk | Rows deleted | Duration |",
      "|---|---|---|",
      ...chunks.map(({ chunk, rows, ms }) => `| ${chunk} | ${thousands(rows)} | ${ms.toFixed(1)} ms |`),
    ];
    process.stdout.write(`${lines.join("\n")}\n`);
    if (KEEP) log(`Kept ${directory}`);
  } finally {
    await cleanup.run();
  }
}

await main();
