// `npm run bench` (docs/performance.md): what the app costs against a floor, on this machine. Two parts:
// - Reads: the four read paths of the partner API under wrk, in alternating rounds on the app and on the floor Worker
//   (bench/floor/: the same paths with one D1 round trip each and nothing else), the same data seeded in both.
// - Webhook deliveries end to end: 1 and 16 concurrent reporters post new bookings through the core platform's
//   route for a few seconds; the project's receiver (test/receiver.ts) records when each delivery
//   of booking.created arrives.
// Both Workers run under `wrangler dev` on their own copies of their configuration and their own local state in a
// temporary folder (scripts/local-worker.ts), removed at the end, on an error and on Ctrl-C alike.
// Figures from one machine compare the app with the floor and with itself over time, not with production.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type ReceivedRequest, startReceiver } from "../test/receiver.ts";
import {
  appConfigForLoad,
  type Cleanup,
  cleanupOnExit,
  configCopy,
  type LocalWorker,
  log,
  makeTempDir,
  prepareLocalState,
  RAISED_REQUEST_BUDGET,
  removeDir,
  reportedBooking,
  sleep,
  snapshotBundle,
  startLocalWorker,
} from "./local-worker.ts";
import { businessIdFor, businessSeedSql } from "./seed.ts";
import { LEGACY_SHARD, newApiKey, SHARDS, sqlLiteral } from "./service.ts";
import { PROJECT_ROOT } from "./wrangler.ts";

const USAGE = `Usage: npm run bench [-- options]
  --rounds N            read rounds per route and Worker, alternating app and floor (3)
  --seconds S           length of a read round (5)
  --warmup S            unrecorded wrk run on each Worker before a route's rounds (1)
  --threads N           wrk threads (2)
  --connections N       wrk connections (16)
  --reporters LIST      concurrent reporters of each delivery run, comma-separated (1,16)
  --delivery-seconds S  length of a delivery run (10)
  --endpoints N         webhook endpoints of the business, each receiving every booking.created (10; at most 20)
  --drain-timeout S     how long a delivery run may wait for its last deliveries (60)
  --json PATH           also write the figures as JSON to PATH
  --only reads|deliveries    run one part only
  --keep                keep the temporary folder (wrangler's logs, the local databases) for a look afterwards
  --port N, --floor-port N   where the app and the floor listen (8795, 8794)`;

/** The read paths, as the soak reads them too. */
const COMPATIBILITY_DATE = /^compatibility_date = "\d{4}-\d{2}-\d{2}"$/m;
const READ_ROUTES = ["/api/v1/me", "/api/v1/appointments?limit=100", "/api/v1/orders", "/api/v1/knowledge"];
/** The seeded business: enough rows that a page of appointments (100) and of orders (25, the default) is full. */
const HANDLE = "bench-shop";
/**
 * The bench business is in the legacy shard (binding DB), unlisted, with a key that names no shard: the floor Worker
 * has that database only, so both read the same data the same way (docs/scaling.md, From one database to shards).
 */
const SHARD = LEGACY_SHARD;
const BOOKINGS = 150;
const ORDERS = 60;
const KNOWLEDGE_ITEMS = 5;
const RUNTIME_TOKEN = "bench-runtime-token-0123456789abcdef";

/** A wrong command line, reported with the usage and exit code 2. */
class UsageError extends Error {}

function parseOptions(argv: string[]) {
  let values: ReturnType<typeof parseArgs>["values"];
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        rounds: { type: "string", default: "3" },
        seconds: { type: "string", default: "5" },
        warmup: { type: "string", default: "1" },
        threads: { type: "string", default: "2" },
        connections: { type: "string", default: "16" },
        reporters: { type: "string", default: "1,16" },
        "delivery-seconds": { type: "string", default: "10" },
        endpoints: { type: "string", default: "10" },
        "drain-timeout": { type: "string", default: "60" },
        json: { type: "string" },
        only: { type: "string" },
        keep: { type: "boolean", default: false },
        port: { type: "string", default: "8795" },
        "floor-port": { type: "string", default: "8794" },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const number = (name: string) => {
    const value = Number(values[name]);
    if (!Number.isFinite(value) || value < 0) throw new UsageError(`--${name} must be a number, not ${values[name]}.`);
    return value;
  };
  const reporters = String(values.reporters).split(",").map(Number);
  if (reporters.some((n) => !Number.isInteger(n) || n < 1)) throw new UsageError("--reporters lists whole numbers.");
  const endpoints = number("endpoints");
  // Spec, Limits: 20 webhook endpoints per business.
  if (!Number.isInteger(endpoints) || endpoints < 1 || endpoints > 20) throw new UsageError("--endpoints is 1 to 20.");
  const only = values.only ?? null;
  if (only !== null && only !== "reads" && only !== "deliveries") {
    throw new UsageError("--only is reads or deliveries.");
  }
  const json = typeof values.json === "string" ? resolve(process.env.INIT_CWD ?? process.cwd(), values.json) : null;
  return {
    rounds: Math.max(1, number("rounds")),
    seconds: number("seconds"),
    warmup: number("warmup"),
    threads: number("threads"),
    connections: number("connections"),
    reporters,
    deliverySeconds: number("delivery-seconds"),
    endpoints,
    drainTimeout: number("drain-timeout"),
    json,
    only: only as "reads" | "deliveries" | null,
    keep: values.keep === true,
    port: number("port"),
    floorPort: number("floor-port"),
  };
}

type Options = ReturnType<typeof parseOptions>;

// ---- wrk.
/** wrk's version line, or an error that says how to install it (TOOLCHAIN.md, Load: a Debian package). */
function requireWrk() {
  const probe = spawnSync("wrk", ["-v"], { encoding: "utf8" });
  if (probe.error) {
    throw new Error(
      "The load tool wrk is not installed: it is the Debian package wrk. Install it with `sudo apt-get install -y wrk` and run npm run bench again.",
    );
  }
  return `${probe.stdout}${probe.stderr}`.split("\n")[0]?.trim() ?? "wrk";
}

let runningWrk: ChildProcess | undefined; // stopped by the cleanup on Ctrl-C

/** @param text e.g. "612.00us", "4.51ms", "1.20s" */
function milliseconds(text: string) {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text);
  if (!match) throw new Error(`wrk printed a latency of ${text}`);
  const factor = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] ?? "ms"] ?? 1;
  return Number(match[1]) * factor;
}

type WrkRun = { rps: number; requests: number; p50: number; p99: number; non2xx: number; socketErrors: number };

/**
 * One wrk run against `url` with the API key, its figures read from its --latency output.
 */
function wrk(options: Options, url: string, apiKey: string, seconds: number): Promise<WrkRun> {
  const args = ["-t", String(options.threads), "-c", String(options.connections), "-d", `${seconds}s`, "--latency"];
  const child = spawn("wrk", [...args, "-H", `Authorization: Bearer ${apiKey}`, url], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  runningWrk = child;
  const output: Buffer[] = [];
  child.stdout.on("data", (chunk) => output.push(chunk));
  child.stderr.on("data", (chunk) => output.push(chunk));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      runningWrk = undefined;
      const text = Buffer.concat(output).toString("utf8");
      const rps = /Requests\/sec:\s+([\d.]+)/.exec(text)?.[1];
      const p50 = /^\s+50%\s+(\S+)\s*$/m.exec(text)?.[1];
      const p99 = /^\s+99%\s+(\S+)\s*$/m.exec(text)?.[1];
      if (code !== 0 || !rps || !p50 || !p99) return reject(new Error(`wrk ${url} failed (${code}):\n${text}`));
      const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
      resolve({
        rps: Number(rps),
        requests: Number(/(\d+) requests in/.exec(text)?.[1] ?? 0),
        p50: milliseconds(p50),
        p99: milliseconds(p99),
        non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(text)?.[1] ?? 0),
        socketErrors: socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
      });
    });
  });
}

function median(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/**
 * The nearest-rank percentile of ascending `sorted`.
 */
const percentile = (sorted: number[], p: number) =>
  sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

// ---- The data, the same in both databases.
/**
 * The bench business: the seed's (one API key, a few demo bookings and orders) topped up to BOOKINGS bookings and
 * ORDERS orders, and KNOWLEDGE_ITEMS knowledge items. Series in SQL, so that the file stays small.
 */
async function benchSeedSql(apiKey: { keyHash: string; displayPrefix: string }, now: Date) {
  const business = sqlLiteral(businessIdFor(HANDLE));
  const today = sqlLiteral(now.toISOString().slice(0, 10));
  const instant = sqlLiteral(now.toISOString().slice(0, 19));
  const series = (n: number) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n})`;
  const missing = (table: string) => `(SELECT count(*) FROM ${table} WHERE business_id = ${business})`;
  const stamp = `strftime('%Y-%m-%dT%H:%M:%fZ', ${instant}, '-' || i || ' hours')`;
  const bookings = `INSERT INTO bookings (id, business_id, status, date, time, duration_minutes, service_id, service_name,
  service_price, client_name, client_email, client_phone, payment_status, payment_amount_paid, payment_currency,
  payment_reference, reschedule_count, reschedule_link, cancel_link, conversation_id, created_at)
${series(BOOKINGS)}
SELECT 900000000 + i, ${business}, CASE WHEN i % 7 = 0 THEN 'cancelled' ELSE 'confirmed' END,
  date(${today}, (i % 90 - 30) || ' days'), printf('%02d:%02d', 9 + i % 9, (i % 4) * 15), 45, 'cut-and-blow-dry',
  'Cut & blow-dry', '€45', 'Client ' || i, 'client' || i || '@example.com', printf('+31 6 1234%04d', i),
  CASE WHEN i % 3 = 0 THEN 'paid' ELSE 'unpaid' END, CASE WHEN i % 3 = 0 THEN 45 ELSE 0 END, 'EUR', 'PAY-' || i, 0,
  'https://book.example/${HANDLE}/bookings/' || i || '/reschedule', 'https://book.example/${HANDLE}/bookings/' || i || '/cancel',
  'conv_bench_' || i, ${stamp}
FROM n WHERE i <= ${BOOKINGS} - ${missing("bookings")};`;
  const items = sqlLiteral(JSON.stringify([{ service_id: "shampoo", name: "Shampoo", qty: 2, unit_price: 12.5 }]));
  const orders = `INSERT INTO orders (id, business_id, status, items, total, pay_on_delivery, fulfillment_type,
  client_name, client_email, client_phone, payment_status, payment_amount_paid, notes, conversation_id, created_at)
${series(ORDERS)}
SELECT 900000000 + i, ${business}, CASE WHEN i % 2 = 0 THEN 'fulfilled' ELSE 'preparing' END, ${items}, 25, 0, 'pickup',
  'Client ' || i, 'client' || i || '@example.com', printf('+31 6 1234%04d', i), 'paid', 25, 'Order ' || i,
  'conv_bench_order_' || i, ${stamp}
FROM n WHERE i <= ${ORDERS} - ${missing("orders")};`;
  const content = "'Open from nine to five on weekdays, and from ten to four on Saturdays. Closed on Sundays. ' || i";
  const knowledge = `INSERT INTO knowledge_items (business_id, key, title, content, chars, api_key_id, created_at, updated_at)
${series(KNOWLEDGE_ITEMS)}
SELECT ${business}, 'bench-topic-' || i, 'Topic ' || i, ${content}, length(${content}),
  (SELECT min(id) FROM api_keys WHERE business_id = ${business}), ${instant} || '.000Z', ${instant} || '.000Z'
FROM n;`;
  return `${await businessSeedSql(HANDLE, apiKey, now)}\n${bookings}\n\n${orders}\n\n${knowledge}\n`;
}

// ---- Reads.
async function getJson(url: string, apiKey: string) {
  const response = await fetch(url, { headers: { Authorization: `Bearer ${apiKey}` } });
  const text = await response.text();
  return { status: response.status, bytes: Buffer.byteLength(text), body: response.ok ? JSON.parse(text) : text };
}

/**
 * Both Workers answer every path 200 with as many rows (the same business for /me), so that neither is measured
 * answering an error; the sizes are printed for the reader.
 * @param bases app, floor
 */
async function checkParity(bases: string[], apiKey: string) {
  for (const route of READ_ROUTES) {
    const [app, floor] = await Promise.all(bases.map((base) => getJson(`${base}${route}`, apiKey)));
    if (!app || !floor || app.status !== 200 || floor.status !== 200) {
      throw new Error(`${route}: app ${app?.status} ${app?.body}, floor ${floor?.status} ${floor?.body}`);
    }
    const rows = (body: { data?: unknown; id?: unknown }) => (Array.isArray(body.data) ? body.data.length : body.id);
    if (rows(app.body) !== rows(floor.body)) {
      throw new Error(`${route}: app ${rows(app.body)}, floor ${rows(floor.body)}`);
    }
    const what = typeof rows(app.body) === "number" ? `${rows(app.body)} rows` : "the business";
    log(`  ${route}: ${what} from each; ${app.bytes} bytes from the app, ${floor.bytes} from the floor`);
  }
}

/**
 * One wrk run on `worker`, with the CPU time its whole local stack (wrangler, its two workerd processes) spent on it,
 * per request: unlike requests a second, it does not depend on what else the machine runs meanwhile.
 */
async function measuredRun(options: Options, worker: LocalWorker, route: string, apiKey: string) {
  const cpuBefore = worker.cpuSeconds();
  const run = await wrk(options, `${worker.baseUrl}${route}`, apiKey, options.seconds);
  const cpuAfter = worker.cpuSeconds();
  if (run.non2xx > 0 || run.socketErrors > 0) {
    throw new Error(`${worker.baseUrl}${route}: ${run.non2xx} answers not 2xx, ${run.socketErrors} socket errors`);
  }
  const cpuMicroseconds =
    cpuBefore === null || cpuAfter === null ? null : ((cpuAfter - cpuBefore) * 1e6) / run.requests;
  return { ...run, cpuMicroseconds };
}

/**
 * The medians of the CPU a request cost each Worker's local stack, in microseconds, and the floor's as a share of the
 * app's (the same ratio as app/floor requests a second on an idle machine); null where CPU times cannot be read.
 */
function cpuFigures(app: Array<{ cpuMicroseconds: number | null }>, floor: Array<{ cpuMicroseconds: number | null }>) {
  const medianOf = (runs: Array<{ cpuMicroseconds: number | null }>) =>
    runs.some((run) => run.cpuMicroseconds === null) ? null : median(runs.map((run) => Number(run.cpuMicroseconds)));
  const appCpu = medianOf(app);
  const floorCpu = medianOf(floor);
  return {
    app_cpu_us_per_request: appCpu === null ? null : Math.round(appCpu),
    floor_cpu_us_per_request: floorCpu === null ? null : Math.round(floorCpu),
    cpu_ratio: appCpu === null || floorCpu === null ? null : Number((floorCpu / appCpu).toFixed(3)),
  };
}

/**
 * Per route: a warm-up on each, then rounds alternating app and floor, so that a slow spell of the machine falls on
 * both; the figures are the medians of the rounds.
 * @param workers app, floor
 */
async function measureReads(options: Options, workers: LocalWorker[], apiKey: string) {
  const results = [];
  for (const route of READ_ROUTES) {
    if (options.warmup > 0) {
      for (const { baseUrl } of workers) await wrk(options, `${baseUrl}${route}`, apiKey, options.warmup);
    }
    const runs: Awaited<ReturnType<typeof measuredRun>>[][] = [[], []];
    for (let round = 0; round < options.rounds; round++) {
      for (const [i, worker] of workers.entries()) runs[i]?.push(await measuredRun(options, worker, route, apiKey));
    }
    const [app = [], floor = []] = runs;
    const appRps = median(app.map((run) => run.rps));
    const floorRps = median(floor.map((run) => run.rps));
    const result = {
      route,
      app_rps: Math.round(appRps),
      floor_rps: Math.round(floorRps),
      ratio: Number((appRps / floorRps).toFixed(3)),
      app_p50_ms: median(app.map((run) => run.p50)),
      app_p99_ms: median(app.map((run) => run.p99)),
      floor_p50_ms: median(floor.map((run) => run.p50)),
      floor_p99_ms: median(floor.map((run) => run.p99)),
      ...cpuFigures(app, floor),
      rounds: { app: app.map((run) => Math.round(run.rps)), floor: floor.map((run) => Math.round(run.rps)) },
    };
    log(`  ${route}: app ${result.rounds.app.join(", ")} req/s; floor ${result.rounds.floor.join(", ")} req/s`);
    results.push(result);
  }
  return results;
}

// ---- Webhook deliveries.
/**
 * The delivery run under way: when each event was reported (client side, before the request), and the first arrival
 * of each (endpoint, event) pair; a repeated arrival is counted apart.
 */
type DeliveryRun = {
  sentAt: Map<string, number>;
  firstArrival: Map<string, { eventId: string; at: number }>;
  repeats: number;
};
let deliveryRun: DeliveryRun | undefined;

function recordDelivery({ path, body, arrivedAt }: ReceivedRequest) {
  let envelope: { id?: unknown; event?: unknown } | undefined;
  try {
    envelope = JSON.parse(body);
  } catch {
    return;
  }
  if (!deliveryRun || envelope?.event !== "booking.created") return;
  const key = `${path} ${envelope.id}`;
  if (deliveryRun.firstArrival.has(key)) deliveryRun.repeats += 1;
  else deliveryRun.firstArrival.set(key, { eventId: String(envelope.id), at: arrivedAt });
}

let nextBookingId = 800_000_000;

/**
 * `reporters` loops that report a new booking each, one after the other, for `seconds`; then a wait until every
 * endpoint has received every event (or the drain timeout).
 * @param base the app
 */
async function measureDeliveries(
  options: Options,
  base: string,
  businessId: string,
  reporters: number,
  seconds: number,
) {
  const run = { sentAt: new Map(), firstArrival: new Map(), repeats: 0 };
  deliveryRun = run;
  let reports = 0;
  const startedAt = performance.now();
  const deadline = startedAt + seconds * 1000;
  const reporter = async () => {
    while (performance.now() < deadline) {
      const sentAt = performance.now();
      const response = await fetch(`${base}/internal/v1/businesses/${businessId}/events`, {
        method: "POST",
        headers: { Authorization: `Bearer ${RUNTIME_TOKEN}`, "Content-Type": "application/json" },
        body: JSON.stringify({ booking: reportedBooking(nextBookingId++) }),
      });
      const text = await response.text();
      if (response.status !== 201) throw new Error(`a booking report answered ${response.status}: ${text}`);
      reports += 1;
      for (const { id } of JSON.parse(text).events) run.sentAt.set(String(id), sentAt);
    }
  };
  await Promise.all(Array.from({ length: reporters }, reporter));
  const windowEnd = performance.now();
  const expected = run.sentAt.size * options.endpoints;
  while (run.firstArrival.size < expected && performance.now() - windowEnd < options.drainTimeout * 1000) {
    await sleep(20);
  }
  await sleep(200); // a last look for repeats
  deliveryRun = undefined;

  const arrivals = [...run.firstArrival.values()].filter(({ eventId }) => run.sentAt.has(eventId));
  const latencies = arrivals.map(({ eventId, at }) => at - run.sentAt.get(eventId)).sort((a, b) => a - b);
  const lastArrival = Math.max(windowEnd, ...arrivals.map(({ at }) => at));
  const window = (windowEnd - startedAt) / 1000;
  const round = (n: number, digits = 1) => Number(n.toFixed(digits));
  return {
    reporters,
    endpoints: options.endpoints,
    seconds: round(window, 2),
    reports,
    events: run.sentAt.size,
    reports_per_s: round(reports / window),
    deliveries_expected: expected,
    deliveries_received: arrivals.length,
    deliveries_in_window: arrivals.filter(({ at }) => at <= windowEnd).length,
    deliveries_per_s: round(arrivals.filter(({ at }) => at <= windowEnd).length / window),
    deliveries_per_s_until_drained: round(arrivals.length / ((lastArrival - startedAt) / 1000)),
    drain_s: round((lastArrival - windowEnd) / 1000, 2),
    repeats: run.repeats,
    latency_p50_ms: round(percentile(latencies, 50)),
    latency_p99_ms: round(percentile(latencies, 99)),
    latency_max_ms: round(latencies.at(-1) ?? Number.NaN),
  };
}

// ---- Output.
/**
 * Columns padded to their widest cell: the first (names) to the left, the figures to the right.
 * @param rows the first is the heading
 */
function table(rows: Array<Array<string | number>>) {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => String(row[column]).length))) ?? [];
  const line = (row: Array<string | number>) =>
    row
      .map((cell, column) => {
        const width = widths[column] ?? 0;
        return column === 0 ? String(cell).padEnd(width) : String(cell).padStart(width);
      })
      .join("  ");
  return rows.map(line).join("\n");
}

function summary(
  options: Options,
  reads: Awaited<ReturnType<typeof measureReads>> | null,
  deliveries: Awaited<ReturnType<typeof deliveryRuns>> | null,
) {
  const ms = (n: number) => `${n.toFixed(1)} ms`;
  const lines = [];
  if (reads) {
    lines.push(
      `Reads: wrk -t${options.threads} -c${options.connections}, ${options.rounds} × ${options.seconds} s per Worker in alternating rounds; medians of the rounds`,
      table([
        ["route", "app req/s", "floor req/s", "app/floor", "app p50", "app p99", "CPU/request app, floor", "floor/app"],
        ...reads.map((r) => [
          r.route,
          r.app_rps,
          r.floor_rps,
          r.ratio.toFixed(2),
          ms(r.app_p50_ms),
          ms(r.app_p99_ms),
          r.app_cpu_us_per_request === null ? "-" : `${r.app_cpu_us_per_request}, ${r.floor_cpu_us_per_request} µs`,
          r.cpu_ratio === null ? "-" : r.cpu_ratio.toFixed(2),
        ]),
      ]),
      "",
    );
  }
  if (deliveries) {
    lines.push(
      `Webhook deliveries: booking.created reports for ${options.deliverySeconds} s, fan-out ${options.endpoints} endpoints per event; latency from sending the report to the delivery's arrival`,
      table([
        ["reporters", "reports/s", "deliveries/s", "until drained", "p50", "p99", "delivered", "last after"],
        ...deliveries.map((d) => [
          d.reporters,
          d.reports_per_s,
          d.deliveries_per_s,
          d.deliveries_per_s_until_drained,
          ms(d.latency_p50_ms),
          ms(d.latency_p99_ms),
          `${d.deliveries_received}/${d.deliveries_expected}`,
          `${d.drain_s} s`,
        ]),
      ]),
    );
  }
  return lines.join("\n");
}

function machine(wrkVersion: string | null) {
  const cpus = os.cpus();
  const wrangler = JSON.parse(readFileSync(join(PROJECT_ROOT, "node_modules", "wrangler", "package.json"), "utf8"));
  return {
    cpu_model: cpus[0]?.model ?? "unknown",
    cpu_count: cpus.length,
    memory_gb: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    wrangler: wrangler.version,
    wrk: wrkVersion,
  };
}

// ---- The run.
/**
 * The app, and the floor when the reads are measured, both seeded with `seed`. Started at once, and both settled
 * before going on: a failure of one must not leave the other starting unseen.
 */
async function startWorkers(options: Options, directory: string, seed: string, cleanup: Cleanup) {
  const { config, originalBudget } = appConfigForLoad();
  log(
    `The app runs on its own copy of wrangler.toml: PRINCIPAL_RATE_LIMIT raised from ${originalBudget} to ${RAISED_REQUEST_BUDGET.toLocaleString("en")} requests a minute for this run only, so that the budget does not shape the figures.`,
  );
  const withFloor = options.only !== "deliveries";
  const floorToo = withFloor ? ` and the floor Worker on port ${options.floorPort}` : "";
  log(`Starting the app on port ${options.port}${floorToo} (state in ${directory})...`);
  /** One Worker on a bundle of its own in `folder`, its state migrated and seeded, answering `readyPath`. */
  const start = async (
    folder: string,
    workerConfig: string,
    port: number,
    readyPath: string,
    vars?: Record<string, string>,
  ) => {
    const { configPath, bundle } = await snapshotBundle(folder, workerConfig);
    const persistTo = join(folder, "state");
    await prepareLocalState({ configPath, persistTo }, [{ binding: SHARDS[SHARD].binding, sql: seed }]);
    const logFile = join(folder, "wrangler-dev.log");
    const worker = await startLocalWorker({
      port,
      configPath,
      persistTo,
      noBundle: true,
      vars,
      readyPath,
      logFile,
      cleanup,
    });
    return { ...worker, bundle, logFile };
  };
  const started = await Promise.allSettled([
    start(join(directory, "app"), config, options.port, "/api/v1/openapi.json", {
      BASE_URL: `http://127.0.0.1:${options.port}`,
      ALLOW_LOOPBACK_URLS: "true",
      RUNTIME_TOKEN,
    }),
    withFloor
      ? start(
          join(directory, "floor"),
          // The app's compatibility date, whatever the floor's file says, so that both run on the same behaviour.
          configCopy(join(PROJECT_ROOT, "bench", "floor", "wrangler.toml"), [
            [COMPATIBILITY_DATE, COMPATIBILITY_DATE.exec(config)?.[0] ?? ""],
          ]),
          options.floorPort,
          "/",
        )
      : undefined,
  ]);
  const [app, floor] = started.map((outcome) => {
    if (outcome.status === "rejected") throw outcome.reason;
    return outcome.value;
  });
  if (!app) throw new Error("the app did not start");
  log(`Seeded ${HANDLE}: ${BOOKINGS} bookings, ${ORDERS} orders, ${KNOWLEDGE_ITEMS} knowledge items.`);
  return { app, floor };
}

/**
 * Subscribes the endpoints, warms the path up, then one delivery run per number of reporters.
 * @param base the app
 */
async function deliveryRuns(options: Options, base: string, apiKey: string, receiverUrl: string) {
  for (let e = 0; e < options.endpoints; e++) {
    const response = await fetch(`${base}/api/v1/webhooks`, {
      method: "POST",
      headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
      body: JSON.stringify({ url: `${receiverUrl}/hooks/e${e}`, events: ["booking.created"], description: "bench" }),
    });
    if (response.status !== 201) {
      throw new Error(`a webhook endpoint was refused: ${response.status} ${await response.text()}`);
    }
  }
  const businessId = businessIdFor(HANDLE);
  log(`Webhook deliveries: ${options.endpoints} endpoints on ${receiverUrl}; a warm-up run, then...`);
  await measureDeliveries(options, base, businessId, 1, Math.min(2, options.deliverySeconds));
  const results = [];
  for (const reporters of options.reporters) {
    const result = await measureDeliveries(options, base, businessId, reporters, options.deliverySeconds);
    log(
      `  ${reporters} reporter(s): ${result.reports} reports, ${result.deliveries_received} of ${result.deliveries_expected} deliveries, the last ${result.drain_s} s after the window`,
    );
    results.push(result);
  }
  return results;
}

async function bench(options: Options, wrkVersion: string | null, cleanup: Cleanup) {
  const startedAt = new Date();
  // The machine may be shared: its load around the run tells how far the figures can be trusted.
  const loadAtStart = os.loadavg()[0];
  const directory = makeTempDir("secretary-bench-");
  cleanup.add(() => (options.keep ? log(`Kept ${directory} (--keep).`) : removeDir(directory)));
  cleanup.add(() => runningWrk?.kill("SIGTERM"));
  const receiver = await startReceiver({ onRequest: recordDelivery, record: false });
  cleanup.add(receiver.close);

  const { key: apiKey, ...stored } = newApiKey(SHARD);
  const { app, floor } = await startWorkers(options, directory, await benchSeedSql(stored, new Date()), cleanup);
  let reads = null;
  if (floor) {
    await checkParity([app.baseUrl, floor.baseUrl], apiKey);
    log("Reads...");
    reads = await measureReads(options, [app, floor], apiKey);
  }
  const deliveries = options.only === "reads" ? null : await deliveryRuns(options, app.baseUrl, apiKey, receiver.url);

  process.stdout.write(`\n${summary(options, reads, deliveries)}\n`);
  const figures = {
    date: startedAt.toISOString(),
    seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine: machine(wrkVersion),
    load_average_1min: { start: loadAtStart, end: os.loadavg()[0] },
    options: { ...options, json: undefined },
    // Which code was measured: the bundle of src/ taken when the run started.
    app_bundle: {
      sha256: createHash("sha256").update(readFileSync(app.bundle)).digest("hex"),
      bytes: statSync(app.bundle).size,
    },
    seeded: { bookings: BOOKINGS, orders: ORDERS, knowledge_items: KNOWLEDGE_ITEMS },
    request_budget_per_minute: RAISED_REQUEST_BUDGET,
    reads,
    deliveries,
  };
  if (options.json) {
    writeFileSync(options.json, `${JSON.stringify(figures, null, 2)}\n`);
    log(`Figures written to ${options.json}.`);
  }
  const lost = (deliveries ?? []).reduce((sum, d) => sum + d.deliveries_expected - d.deliveries_received, 0);
  if (lost > 0) {
    throw new Error(
      `${lost} deliveries had not arrived ${options.drainTimeout} s after their run (--drain-timeout); --keep keeps wrangler's logs and the database.`,
    );
  }
}

async function main() {
  let options: Options;
  try {
    options = parseOptions(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    log(`${error.message}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const cleanup = cleanupOnExit();
  try {
    // Only the reads need wrk.
    await bench(options, options.only === "deliveries" ? null : requireWrk(), cleanup);
  } catch (error) {
    log(`Bench failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exitCode = 1;
  } finally {
    await cleanup.run();
  }
}

await main();
