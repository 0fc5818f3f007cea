// `npm run bench` (docs/performance.md): what the app costs against a floor, on this machine, with one business in
// each regional shard (eu1 and us1, docs/scaling.md, Regional shards). Two parts:
// - Reads: the four read paths of the partner API under wrk, for each business, in alternating rounds on the app and
//   on the floor Worker (bench/floor/: the same paths with one D1 round trip each and nothing else). The app holds
//   each business in its shard, the floor (one database, binding DB) holds both, with the same keys.
// - Webhook deliveries end to end, paced (open loop): at each rate of a ladder, reports of new bookings are sent at
//   fixed intervals whether or not earlier ones have answered, alternating the two businesses, and each delivery is
//   timed from its report's scheduled send time, so that a slow service cannot slow the load down and hide its own
//   delay (closed-loop reporters did, and measured the local queue broker more than the service). The project's
//   receiver (test/receiver.ts) records when each delivery of booking.created arrives. The same ladder runs on the
//   floor Worker (bench/floor/: the event and its delivery rows in one D1 batch, a consumer that claims a queue batch in
//   one statement, signs, POSTs and records in one D1 batch), rate by rate after the app.
// Both Workers run under `wrangler dev` on their own copies of their configuration and their own local state in a
// temporary folder (scripts/local-worker.ts), removed at the end, on an error and on Ctrl-C alike.
// Figures from one machine compare the app with the floor and with itself over time, not with production.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
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
  type SeedFile,
  sleep,
  snapshotBundle,
  startLocalWorker,
} from "./local-worker.ts";
import { businessIdFor, businessSeedSql, directorySql, ownerEmailFor } from "./seed.ts";
import { LEGACY_SHARD, newApiKey, SHARDS, type ShardName, shardForCountry, sqlLiteral } from "./service.ts";
import { LOCAL_ONLY_VARS, PROJECT_ROOT } from "./wrangler.ts";

const USAGE = `Usage: npm run bench [-- options]
  --rounds N            read rounds per route and Worker, alternating app and floor (3)
  --seconds S           length of a read round (5)
  --warmup S            unrecorded wrk run on each Worker before a route's rounds (1)
  --threads N           wrk threads (2)
  --connections N       wrk connections (16)
  --rates LIST          the ladder of delivery runs, reports a second, comma-separated (5,10,20,30,40,60,80), on the
                        app and on the floor; each stops after its first rate not sustained
  --delivery-seconds S  length of a delivery run (10)
  --endpoints N         webhook endpoints of each business, each receiving every booking.created (10; at most 20)
  --drain-timeout S     how long a delivery run may wait for its last deliveries after its last report (60)
  --json PATH           also write the figures as JSON to PATH
  --only reads|deliveries    run one part only
  --keep                keep the temporary folder (wrangler's logs, the local databases) for a look afterwards
  --port N, --floor-port N   where the app and the floor listen (8795, 8794)`;

const COMPATIBILITY_DATE = /^compatibility_date = "\d{4}-\d{2}-\d{2}"$/m;
/** The reads' target: the app at 0.9 × the floor's requests a second or more (docs/performance.md). */
const READS_TARGET = 0.9;
/** The read paths, as the soak reads them too. */
const READ_ROUTES = ["/api/v1/me", "/api/v1/appointments?limit=100", "/api/v1/orders", "/api/v1/knowledge"];
/**
 * The seeded businesses, one per regional shard, placed by their country as a new business is (`shardForCountry`,
 * src/db/shards.ts); each with enough rows that a page of appointments (100) and of orders (25, the default) is full.
 * `firstId` numbers its bookings and orders apart from the other's, since the floor's one database holds both.
 */
const BUSINESSES = [
  { handle: "bench-eu", country: "NL", firstId: 900_000_000 },
  { handle: "bench-us", country: "US", firstId: 900_001_000 },
] as const;
const BOOKINGS = 150;
const ORDERS = 60;
const KNOWLEDGE_ITEMS = 5;
const RUNTIME_TOKEN = "bench-runtime-token-0123456789abcdef";
/** The deliveries' target on this machine: 600 a second sustained, 10 endpoints to a report. */
const DELIVERIES_TARGET = 600;
/** The consumer settings the floor takes from the app's wrangler.toml, so that both consumers get the same batches. */
const QUEUE_SETTINGS = ["max_batch_size", "max_batch_timeout", "max_retries", "max_concurrency", "retry_delay"].map(
  (name) => new RegExp(`^${name} = \\d+$`, "m"),
);

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
        rates: { type: "string", default: "5,10,20,30,40,60,80" },
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
  // A ladder climbs: the rates in ascending order, each once.
  const rates = [...new Set(String(values.rates).split(",").map(Number))].sort((a, b) => a - b);
  if (rates.some((n) => !Number.isFinite(n) || n <= 0))
    throw new UsageError("--rates lists reports a second, above 0.");
  const endpoints = number("endpoints");
  // At most 20 webhook endpoints per business (docs/guides/webhooks.md, Subscribing).
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
    rates,
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
/** wrk's version line, or an error that says how to install it (docs/toolchain.md, Debian packages). */
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

// ---- The data, the same in both Workers.
/** A bench business: where it lives, and its API key, which names its shard (src/db/shards.ts, shardOfSecret). */
type BenchBusiness = (typeof BUSINESSES)[number] & {
  businessId: string;
  shard: ShardName;
  apiKey: string;
  stored: { keyHash: string; displayPrefix: string };
};

const benchBusinesses = (): BenchBusiness[] =>
  BUSINESSES.map((business) => {
    const shard = shardForCountry(business.country);
    const { key, ...stored } = newApiKey(shard);
    return { ...business, businessId: businessIdFor(business.handle), shard, apiKey: key, stored };
  });

/**
 * A bench business: the seed's (one API key, a few demo bookings and orders) topped up to BOOKINGS bookings and
 * ORDERS orders, and KNOWLEDGE_ITEMS knowledge items. Series in SQL, so that the file stays small.
 */
async function benchSeedSql({ handle, country, firstId, stored }: BenchBusiness, now: Date) {
  const business = sqlLiteral(businessIdFor(handle));
  const today = sqlLiteral(now.toISOString().slice(0, 10));
  const instant = sqlLiteral(now.toISOString().slice(0, 19));
  const series = (n: number) => `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${n})`;
  const missing = (table: string) => `(SELECT count(*) FROM ${table} WHERE business_id = ${business})`;
  const stamp = `strftime('%Y-%m-%dT%H:%M:%fZ', ${instant}, '-' || i || ' hours')`;
  const bookings = `INSERT INTO bookings (id, business_id, status, date, time, duration_minutes, service_id, service_name,
  service_price, client_name, client_email, client_phone, payment_status, payment_amount_paid, payment_currency,
  payment_reference, reschedule_count, reschedule_link, cancel_link, conversation_id, created_at, updated_at)
${series(BOOKINGS)}
SELECT ${firstId} + i, ${business}, CASE WHEN i % 7 = 0 THEN 'cancelled' ELSE 'confirmed' END,
  date(${today}, (i % 90 - 30) || ' days'), printf('%02d:%02d', 9 + i % 9, (i % 4) * 15), 45, 'cut-and-blow-dry',
  'Cut & blow-dry', '€45', 'Client ' || i, 'client' || i || '@example.com', printf('+31 6 1234%04d', i),
  CASE WHEN i % 3 = 0 THEN 'paid' ELSE 'unpaid' END, CASE WHEN i % 3 = 0 THEN 45 ELSE 0 END, 'EUR', 'PAY-' || i, 0,
  'https://book.example/${handle}/bookings/' || i || '/reschedule', 'https://book.example/${handle}/bookings/' || i || '/cancel',
  'conv_${handle}_' || i, ${stamp}, ${stamp}
FROM n WHERE i <= ${BOOKINGS} - ${missing("bookings")};`;
  const items = sqlLiteral(JSON.stringify([{ service_id: "shampoo", name: "Shampoo", qty: 2, unit_price: 12.5 }]));
  const orders = `INSERT INTO orders (id, business_id, status, items, total, pay_on_delivery, fulfillment_type,
  client_name, client_email, client_phone, payment_status, payment_amount_paid, notes, conversation_id, created_at,
  updated_at)
${series(ORDERS)}
SELECT ${firstId} + i, ${business}, CASE WHEN i % 2 = 0 THEN 'fulfilled' ELSE 'preparing' END, ${items}, 25, 0, 'pickup',
  'Client ' || i, 'client' || i || '@example.com', printf('+31 6 1234%04d', i), 'paid', 25, 'Order ' || i,
  'conv_${handle}_order_' || i, ${stamp}, ${stamp}
FROM n WHERE i <= ${ORDERS} - ${missing("orders")};`;
  const content = "'Open from nine to five on weekdays, and from ten to four on Saturdays. Closed on Sundays. ' || i";
  const knowledge = `INSERT INTO knowledge_items (business_id, key, title, content, chars, api_key_id, created_at, updated_at)
${series(KNOWLEDGE_ITEMS)}
SELECT ${business}, 'bench-topic-' || i, 'Topic ' || i, ${content}, length(${content}),
  (SELECT min(id) FROM api_keys WHERE business_id = ${business}), ${instant} || '.000Z', ${instant} || '.000Z'
FROM n;`;
  return `${await businessSeedSql(handle, stored, now, country)}\n${bookings}\n\n${orders}\n\n${knowledge}\n`;
}

/** Where endpoint `e` of a business of `shard` receives, in the app or in the floor: the receiver tells them apart. */
const endpointUrl = (receiverUrl: string, worker: DeliveryWorker, shard: ShardName, e: number) =>
  `${receiverUrl}/hooks/${worker}/${shard}/e${e}`;

/**
 * The floor's webhook endpoints, as the app stores those its API subscribes: `--endpoints` of each business, enabled,
 * subscribed to booking.created, each with a secret of the app's form (`whsec_` and 32 bytes in base64) and its key.
 */
function floorEndpointsSql(options: Options, businesses: BenchBusiness[], receiverUrl: string, now: Date) {
  const rows = businesses.flatMap(({ businessId, shard }) =>
    Array.from({ length: options.endpoints }, (_, e) =>
      [
        sqlLiteral(businessId),
        sqlLiteral(endpointUrl(receiverUrl, "floor", shard, e)),
        sqlLiteral(JSON.stringify(["booking.created"])),
        "'bench'",
        sqlLiteral(`whsec_${randomBytes(32).toString("base64")}`),
        `(SELECT min(id) FROM api_keys WHERE business_id = ${sqlLiteral(businessId)})`,
        sqlLiteral(now.toISOString()),
      ].join(", "),
    ),
  );
  return `INSERT INTO webhook_endpoints (business_id, url, events, description, secret, api_key_id, created_at) VALUES
(${rows.join("),\n(")});\n`;
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
 * Per route, for `business`: a warm-up on each, then rounds alternating app and floor, so that a slow spell of the
 * machine falls on both; the figures are the medians of the rounds.
 * @param workers app, floor
 */
async function measureReads(options: Options, workers: LocalWorker[], { shard, apiKey }: BenchBusiness) {
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
      shard,
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
    log(
      `  ${shard} ${route}: app ${result.rounds.app.join(", ")} req/s; floor ${result.rounds.floor.join(", ")} req/s`,
    );
    results.push(result);
  }
  return results;
}

// ---- Webhook deliveries.
/**
 * The delivery run under way: when each event's report was scheduled, and the first arrival of each (endpoint, event)
 * pair; a repeated arrival is counted apart. A delivery may arrive before its report has answered (the enqueue is
 * `waitUntil`), so arrivals are matched to reports once the run is over.
 */
type DeliveryRun = {
  scheduledAt: Map<string, number>;
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

/** Reports one new booking of `businessId` through the core platform's route; answers the ids of its events. */
async function reportBooking(base: string, businessId: string, timeoutMs: number): Promise<string[]> {
  const response = await fetch(`${base}/internal/v1/businesses/${businessId}/events`, {
    method: "POST",
    headers: { Authorization: `Bearer ${RUNTIME_TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify({ booking: reportedBooking(nextBookingId++) }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  if (response.status !== 201) throw new Error(`a booking report answered ${response.status}: ${text}`);
  return JSON.parse(text).events.map(({ id }: { id: unknown }) => String(id));
}

/** The most a median may be for a rate to count as sustained (docs/performance.md, Webhook delivery end to end). */
const SUSTAINED_MEDIAN_MS = 1000;

/**
 * One paced run: `rate` reports a second for `seconds`, each sent at its scheduled time whether or not the earlier
 * ones have answered (open loop), alternating `businesses`; then a wait until every endpoint has received every event,
 * or the drain timeout after the last scheduled report. Latencies run from the scheduled time, so that a send the
 * bench itself made late counts against the run rather than vanishing (coordinated omission).
 * @param base the app or the floor
 */
async function measurePaced(
  options: Options,
  base: string,
  businesses: BenchBusiness[],
  rate: number,
  seconds: number,
) {
  const run: DeliveryRun = { scheduledAt: new Map(), firstArrival: new Map(), repeats: 0 };
  deliveryRun = run;
  const count = Math.max(1, Math.round(rate * seconds));
  const failures: string[] = [];
  let sendLagMax = 0;
  const startedAt = performance.now();
  const scheduleEnd = startedAt + ((count - 1) * 1000) / rate;
  const drainDeadline = scheduleEnd + options.drainTimeout * 1000;
  const sends: Promise<void>[] = [];
  for (let k = 0; k < count; k++) {
    const scheduledAt = startedAt + (k * 1000) / rate;
    const early = scheduledAt - performance.now();
    if (early > 0) await sleep(early);
    sendLagMax = Math.max(sendLagMax, performance.now() - scheduledAt);
    const { businessId } = businesses[k % businesses.length] as BenchBusiness;
    sends.push(
      reportBooking(base, businessId, Math.max(1, Math.ceil(drainDeadline - performance.now()))).then(
        (ids) => {
          for (const id of ids) run.scheduledAt.set(id, scheduledAt);
        },
        (error) => void failures.push(error instanceof Error ? error.message : String(error)),
      ),
    );
  }
  await Promise.all(sends);
  const expected = run.scheduledAt.size * options.endpoints;
  const matched = () => [...run.firstArrival.values()].filter(({ eventId }) => run.scheduledAt.has(eventId));
  while (matched().length < expected && performance.now() < drainDeadline) await sleep(50);
  await sleep(200); // a last look for repeats
  deliveryRun = undefined;

  const arrivals = matched();
  const latencies = arrivals.map(({ eventId, at }) => at - (run.scheduledAt.get(eventId) ?? at)).sort((a, b) => a - b);
  const lastArrival = Math.max(scheduleEnd, ...arrivals.map(({ at }) => at));
  const round = (n: number, digits = 1) => Number(n.toFixed(digits));
  const p50 = percentile(latencies, 50);
  return {
    rate,
    endpoints: options.endpoints,
    seconds,
    reports: count,
    reports_failed: failures.length,
    first_failure: failures[0] ?? null,
    events: run.scheduledAt.size,
    deliveries_expected: expected,
    deliveries_received: arrivals.length,
    // From the first scheduled report to the last arrival: what the service delivered, backlog included.
    deliveries_per_s: round(arrivals.length / ((lastArrival - startedAt) / 1000)),
    drain_s: round((lastArrival - scheduleEnd) / 1000, 2),
    repeats: run.repeats,
    send_lag_max_ms: round(sendLagMax),
    latency_p50_ms: round(p50),
    latency_p99_ms: round(percentile(latencies, 99)),
    latency_max_ms: round(latencies.at(-1) ?? Number.NaN),
    // Sustained (docs/performance.md, Webhook delivery end to end): every delivery arrived, at a median ≤ 1 s.
    sustained: failures.length === 0 && expected > 0 && arrivals.length === expected && p50 <= SUSTAINED_MEDIAN_MS,
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
      `Reads: wrk -t${options.threads} -c${options.connections}, ${options.rounds} × ${options.seconds} s per Worker in alternating rounds; medians of the rounds; the app reads each business in its shard, the floor both in its one database`,
      table([
        [
          "shard",
          "route",
          "app req/s",
          "floor req/s",
          "app/floor",
          "app p50",
          "app p99",
          "CPU/request app, floor",
          "floor/app",
        ],
        ...reads.map((r) => [
          r.shard,
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
    );
    const below = reads.filter((r) => r.ratio < READS_TARGET);
    lines.push(
      below.length === 0
        ? `Every route of every shard is at or above ${READS_TARGET} × the floor.`
        : `Below ${READS_TARGET} × the floor: ${below.map((r) => `${r.shard} ${r.route} ${r.ratio.toFixed(2)}`).join(", ")}.`,
      "",
    );
  }
  if (deliveries) {
    const shards = deliveries.shards.join(" and ");
    const ladders = DELIVERY_WORKERS.map((worker) => ({ worker, ...deliveries[worker] }));
    lines.push(
      `Webhook deliveries, paced, on the app and on the floor: booking.created reports at a fixed rate for ${options.deliverySeconds} s, alternating a business in ${shards}, ${options.endpoints} endpoints each; latency from the report's scheduled send time to the delivery's arrival; sustained: every delivery within ${options.drainTimeout} s and a median ≤ ${SUSTAINED_MEDIAN_MS / 1000} s`,
      table([
        ["worker", "reports/s", "delivered", "deliveries/s", "p50", "p99", "last after", "send lag", "sustained"],
        ...ladders.flatMap(({ worker, runs }) =>
          runs.map((d) => [
            worker,
            d.rate,
            `${d.deliveries_received}/${d.deliveries_expected}`,
            d.deliveries_per_s,
            ms(d.latency_p50_ms),
            ms(d.latency_p99_ms),
            `${d.drain_s} s`,
            ms(d.send_lag_max_ms),
            d.sustained ? "yes" : `no${d.reports_failed ? ` (${d.reports_failed} reports failed)` : ""}`,
          ]),
        ),
      ]),
    );
    for (const { worker, runs, highest, stoppedAt } of ladders) {
      const limit =
        stoppedAt === null
          ? "every rate of the ladder sustained: the limit is above it (--rates)"
          : `stopped at ${stoppedAt}, the first rate not sustained`;
      lines.push(
        highest
          ? `${worker}: highest rate sustained ${highest.rate} reports a second, ${highest.deliveries_per_s} deliveries a second (${highest.rate * options.endpoints} offered); ${limit}.`
          : `${worker}: no rate sustained, not even ${runs[0]?.rate} reports a second.`,
      );
    }
    const ratio = (value: number | null) => (value === null ? "-" : value.toFixed(2));
    lines.push(
      `Sustained deliveries a second, app/floor: ${ratio(deliveries.app_per_floor)}; app/target (${deliveries.target_deliveries_per_s} a second): ${ratio(deliveries.app_per_target)}.`,
    );
    const failure = ladders.flatMap(({ runs }) => runs).find((d) => d.first_failure)?.first_failure;
    if (failure) lines.push(`First failed report: ${failure}`);
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
 * The app and the floor, both seeded with `businesses`: in the app each in its shard, listed in the directory of the
 * global database first, as the seed places a new business (scripts/seed.ts); in the floor, which binds DB only, all
 * in DB, with their webhook endpoints on the receiver at `receiverUrl` (the app's are subscribed through its API, in
 * `deliveryRuns`). Started at once, and both settled before going on: a failure of one must not leave the other
 * starting unseen.
 */
async function startWorkers(
  options: Options,
  directory: string,
  businesses: BenchBusiness[],
  receiverUrl: string,
  cleanup: Cleanup,
) {
  const now = new Date();
  const seeds = await Promise.all(businesses.map((business) => benchSeedSql(business, now)));
  const global = SHARDS[LEGACY_SHARD].binding;
  const listings = businesses.map(({ businessId, shard, handle }) => ({
    businessId,
    shard,
    ownerEmail: ownerEmailFor(handle),
  }));
  const appSeeds: SeedFile[] = [
    { binding: global, sql: directorySql(listings, now) },
    ...businesses.map(({ shard }, i) => ({ binding: SHARDS[shard].binding, sql: seeds[i] ?? "" })),
  ];
  const floorSeeds: SeedFile[] = [...seeds, floorEndpointsSql(options, businesses, receiverUrl, now)].map((sql) => ({
    binding: global,
    sql,
  }));
  const { config, originalBudget } = appConfigForLoad();
  log(
    `The app runs on its own copy of wrangler.toml: PRINCIPAL_RATE_LIMIT raised from ${originalBudget} to ${RAISED_REQUEST_BUDGET.toLocaleString("en")} requests a minute for this run only, so that the budget does not shape the figures.`,
  );
  log(
    `Starting the app on port ${options.port} and the floor Worker on port ${options.floorPort} (state in ${directory})...`,
  );
  /** One Worker on a bundle of its own in `folder`, its state migrated and seeded, answering `readyPath`. */
  const start = async (
    folder: string,
    workerConfig: string,
    port: number,
    readyPath: string,
    workerSeeds: SeedFile[],
    vars?: Record<string, string>,
  ) => {
    const { configPath, bundle } = await snapshotBundle(folder, workerConfig);
    const persistTo = join(folder, "state");
    await prepareLocalState({ configPath, persistTo }, workerSeeds);
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
  // The app's compatibility date and queue consumer settings, whatever the floor's file says, so that both run on the
  // same behaviour; made before either starts, so that an error here leaves nothing running.
  const floorConfig = configCopy(
    join(PROJECT_ROOT, "bench", "floor", "wrangler.toml"),
    [COMPATIBILITY_DATE, ...QUEUE_SETTINGS].map((setting) => [setting, setting.exec(config)?.[0] ?? ""]),
  );
  const started = await Promise.allSettled([
    start(join(directory, "app"), config, options.port, "/api/v1/openapi.json", appSeeds, {
      BASE_URL: `http://127.0.0.1:${options.port}`,
      ...LOCAL_ONLY_VARS,
      RUNTIME_TOKEN,
    }),
    start(join(directory, "floor"), floorConfig, options.floorPort, "/", floorSeeds, { RUNTIME_TOKEN }),
  ]);
  const [app, floor] = started.map((outcome) => {
    if (outcome.status === "rejected") throw outcome.reason;
    return outcome.value;
  });
  if (!app || !floor) throw new Error("the app or the floor did not start");
  const placed = businesses.map(({ handle, shard }) => `${handle} in ${shard}`).join(", ");
  log(`Seeded ${placed}: ${BOOKINGS} bookings, ${ORDERS} orders, ${KNOWLEDGE_ITEMS} knowledge items each.`);
  return { app, floor };
}

/** The Workers whose deliveries are measured, the app first. */
const DELIVERY_WORKERS = ["app", "floor"] as const;
type DeliveryWorker = (typeof DELIVERY_WORKERS)[number];
type PacedRun = Awaited<ReturnType<typeof measurePaced>>;

/**
 * Subscribes the app's endpoints of each business through its API (the floor's are seeded), warms each Worker up with
 * an unrecorded run at the lowest rate, then climbs the ladder of rates on both, rate by rate, the app first, so that
 * a slow spell of the machine falls on both. Each stops after its first rate not sustained: the rates above it would
 * only queue more. Answers each ladder, and the app's highest sustained deliveries a second against the floor's and
 * against the target (0 when it sustained none).
 */
async function deliveryRuns(
  options: Options,
  bases: Record<DeliveryWorker, string>,
  businesses: BenchBusiness[],
  receiverUrl: string,
) {
  for (const { shard, apiKey } of businesses) {
    for (let e = 0; e < options.endpoints; e++) {
      const response = await fetch(`${bases.app}/api/v1/webhooks`, {
        method: "POST",
        headers: { Authorization: `Bearer ${apiKey}`, "Content-Type": "application/json" },
        body: JSON.stringify({
          url: endpointUrl(receiverUrl, "app", shard, e),
          events: ["booking.created"],
          description: "bench",
        }),
      });
      if (response.status !== 201) {
        throw new Error(`a webhook endpoint was refused: ${response.status} ${await response.text()}`);
      }
    }
  }
  const shards = businesses.map(({ shard }) => shard);
  log(`Webhook deliveries: ${options.endpoints} endpoints per business on ${receiverUrl}; warm-up runs, then...`);
  const newLadder = () => ({ runs: [] as PacedRun[], stoppedAt: null as number | null });
  const ladders = { app: newLadder(), floor: newLadder() };
  for (const worker of DELIVERY_WORKERS) {
    await measurePaced(options, bases[worker], businesses, options.rates[0] ?? 1, Math.min(2, options.deliverySeconds));
  }
  for (const rate of options.rates) {
    for (const worker of DELIVERY_WORKERS) {
      const ladder = ladders[worker];
      if (ladder.stoppedAt !== null) continue;
      const result = await measurePaced(options, bases[worker], businesses, rate, options.deliverySeconds);
      log(
        `  ${worker} ${rate} reports/s: ${result.deliveries_received} of ${result.deliveries_expected} deliveries, median ${result.latency_p50_ms} ms, the last ${result.drain_s} s after the last report${result.sustained ? "" : ": not sustained"}`,
      );
      ladder.runs.push(result);
      if (!result.sustained) ladder.stoppedAt = rate;
    }
  }
  const outcome = ({ runs, stoppedAt }: ReturnType<typeof newLadder>) => ({
    runs,
    highest: runs.filter((run) => run.sustained).at(-1) ?? null,
    stoppedAt,
  });
  const app = outcome(ladders.app);
  const floor = outcome(ladders.floor);
  const sustained = app.highest?.deliveries_per_s ?? 0;
  const ratio = (to: number) => (to > 0 ? Number((sustained / to).toFixed(3)) : null);
  return {
    shards,
    app,
    floor,
    target_deliveries_per_s: DELIVERIES_TARGET,
    app_per_floor: ratio(floor.highest?.deliveries_per_s ?? 0),
    app_per_target: ratio(DELIVERIES_TARGET),
  };
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

  const businesses = benchBusinesses();
  const { app, floor } = await startWorkers(options, directory, businesses, receiver.url, cleanup);
  let reads = null;
  if (options.only !== "deliveries") {
    reads = [];
    for (const business of businesses) {
      log(`Reads of ${business.handle}, in ${business.shard} in the app and in the floor's one database...`);
      await checkParity([app.baseUrl, floor.baseUrl], business.apiKey);
      reads.push(...(await measureReads(options, [app, floor], business)));
    }
  }
  const deliveries =
    options.only === "reads"
      ? null
      : await deliveryRuns(options, { app: app.baseUrl, floor: floor.baseUrl }, businesses, receiver.url);

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
    seeded: {
      businesses: businesses.map(({ handle, country, shard }) => ({ handle, country, shard })),
      bookings: BOOKINGS,
      orders: ORDERS,
      knowledge_items: KNOWLEDGE_ITEMS,
    },
    request_budget_per_minute: RAISED_REQUEST_BUDGET,
    reads,
    deliveries,
  };
  if (options.json) {
    writeFileSync(options.json, `${JSON.stringify(figures, null, 2)}\n`);
    log(`Figures written to ${options.json}.`);
  }
  // A rate not sustained is a figure, not a failure of the bench: the ladder climbs until it finds one.
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
