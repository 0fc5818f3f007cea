// `npm run soak` (docs/reliability.md): `wrangler dev` under a minute of mixed load at 32 connections, then a count
// of what reached a real receiver. Reads, knowledge pushes, reports that fan out to 20 endpoints each, and intake
// runs whose completions reach the same 20. It runs on its own copy of the configuration (the request budget
// raised, loopback URLs allowed) and its own local state in a temporary folder, so the dev database is untouched.
// Exits non-zero on any 5xx, any delivery lost, or any duplicate that a retry does not explain.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import bookingSample from "../test/fixtures/booking.json" with { type: "json" };
import { businessIdFor, DEMO_PASSWORD, hashPassword, newApiKey, seedSql, sqlLiteral } from "./seed.mjs";
import { offlineEnv, PROJECT_ROOT, runWranglerCaptured, WRANGLER_BIN } from "./wrangler.mjs";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "60" },
    connections: { type: "string", default: "32" },
    businesses: { type: "string", default: "4" },
    "reports-per-second": { type: "string", default: "4" },
    "intakes-per-second": { type: "string", default: "1" },
    port: { type: "string", default: "8797" },
  },
});
const DURATION_MS = Number(args.duration) * 1000;
const CONNECTIONS = Number(args.connections);
const BUSINESSES = Number(args.businesses);
const REPORTS_PER_SECOND = Number(args["reports-per-second"]);
const INTAKES_PER_SECOND = Number(args["intakes-per-second"]);
const PORT = Number(args.port);
const BASE = `http://127.0.0.1:${PORT}`;
const ENDPOINTS_PER_BUSINESS = 20;
/** Below the 120 knowledge pushes a business may make in a clock hour (spec: Limits). */
const PUSHES_PER_BUSINESS = 100;
/** How long the deliveries may take to drain after the load; the sweep runs every 20 s meanwhile. */
const DRAIN_MS = 240_000;
/** A retry comes at least a minute after the attempt it repeats (spec: retries after 1, 5, 30... minutes). */
const RETRY_GAP_MS = 55_000;
const RUNTIME_TOKEN = "soak-runtime-token-0123456789abcdef";

/** @param {string} message */
const log = (message) => process.stderr.write(`${message}\n`);
/** @param {number} ms */
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- The receiver: every delivery, by endpoint path and event id, and every delivery id's arrival times.
/** @type {Map<string, number>} */
const received = new Map(); // `${path} ${eventId}` → count
/** @type {Map<string, number[]>} */
const arrivals = new Map(); // delivery id → [ms, ...]
/** @type {Map<string, Set<string>>} */
const intakeEventsByPath = new Map(); // path → Set of intake.completed event ids
const receiver = createServer((request, response) => {
  /** @type {Buffer[]} */
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const path = request.url ?? "/";
    try {
      const envelope = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const key = `${path} ${envelope.id}`;
      received.set(key, (received.get(key) ?? 0) + 1);
      const deliveryId = String(request.headers["x-service-delivery"]);
      arrivals.set(deliveryId, [...(arrivals.get(deliveryId) ?? []), Date.now()]);
      if (envelope.event === "intake.completed") {
        const ids = intakeEventsByPath.get(path) ?? new Set();
        ids.add(envelope.id);
        intakeEventsByPath.set(path, ids);
      }
    } catch {
      // Not an envelope: counted by nobody, answered all the same.
    }
    response.writeHead(200, { "Content-Type": "application/json" });
    response.end('{"ok":true}');
  });
});

// ---- The Worker, on its own configuration and state.
function soakConfig() {
  const original = readFileSync(join(PROJECT_ROOT, "wrangler.toml"), "utf8");
  /** @type {Array<[RegExp, string]>} */
  const replacements = [
    [/^main = .*$/m, `main = ${JSON.stringify(join(PROJECT_ROOT, "src", "index.ts"))}`],
    [/^migrations_dir = .*$/m, `migrations_dir = ${JSON.stringify(join(PROJECT_ROOT, "migrations"))}`],
    [/^directory = .*$/m, `directory = ${JSON.stringify(join(PROJECT_ROOT, "assets"))}`],
    // The per-credential budget of 600 a minute would refuse most of the load: raised for the run only.
    [/simple = \{ limit = \d+, period = 60 \}/, "simple = { limit = 1000000, period = 60 }"],
  ];
  let config = original;
  for (const [pattern, replacement] of replacements) {
    if (!pattern.test(config)) throw new Error(`wrangler.toml no longer has ${pattern}: update scripts/soak.mjs.`);
    config = config.replace(pattern, replacement);
  }
  return config;
}

/** @param {string} text */
const sha256Hex = (text) => createHash("sha256").update(text, "utf8").digest("hex");

/**
 * One business per handle, with an API key and an intake already switched on by its owner.
 * @param {string} handle
 * @param {string} apiKey
 */
function businessSql(handle, apiKey) {
  const now = new Date();
  const keyHash = sha256Hex(apiKey);
  const seeded = seedSql({
    handle,
    plan: "business",
    ownerEmail: `owner@${handle}.example`,
    passwordHash: hashPassword(DEMO_PASSWORD),
    apiKey: { hash: keyHash, displayPrefix: apiKey.slice(0, 12) },
    now,
  });
  const fields = [{ id: "full_name", label: "What is your name?", type: "text", required: true }];
  const content = { title: "Quote", description: "When a customer asks for a quote.", fields };
  const intake = `INSERT INTO intakes (business_id, name, title, description, fields, enabled, version, approved_version,
  approved_content, api_key_id, created_at, updated_at)
SELECT ${sqlLiteral(businessIdFor(handle))}, 'soak_quote', ${sqlLiteral(content.title)}, ${sqlLiteral(content.description)},
  ${sqlLiteral(JSON.stringify(fields))}, 1, 1, 1, ${sqlLiteral(JSON.stringify(content))}, id, ${sqlLiteral(now.toISOString())},
  ${sqlLiteral(now.toISOString())}
FROM api_keys WHERE key_hash = ${sqlLiteral(keyHash)};`;
  return `${seeded}\n${intake}\n`;
}

/** @param {string} directory */
async function startWorker(directory) {
  const configPath = join(directory, "wrangler.toml");
  const state = join(directory, "state");
  writeFileSync(configPath, soakConfig());
  writeFileSync(
    join(directory, ".dev.vars"),
    `BASE_URL=${BASE}\nALLOW_LOOPBACK_URLS=true\nRUNTIME_TOKEN=${RUNTIME_TOKEN}\n`,
  );
  const where = ["-c", configPath, "--persist-to", state];
  await runWranglerCaptured(["d1", "migrations", "apply", "DB", "--local", ...where]);
  /** @type {Business[]} */
  const businesses = [];
  for (let i = 1; i <= BUSINESSES; i++) {
    const handle = `soak-shop-${i}`;
    const apiKey = newApiKey();
    const file = join(directory, `${handle}.sql`);
    writeFileSync(file, businessSql(handle, apiKey));
    await runWranglerCaptured(["d1", "execute", "DB", "--local", ...where, "--file", file]);
    businesses.push({ index: i, id: businessIdFor(handle), apiKey });
  }
  const logFile = join(directory, "wrangler-dev.log");
  /** @type {Buffer[]} */
  const output = [];
  const child = spawn(
    WRANGLER_BIN,
    ["dev", ...where, "--port", String(PORT), "--ip", "127.0.0.1", "--test-scheduled", "--log-level", "warn"],
    { cwd: PROJECT_ROOT, env: offlineEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout.on("data", (chunk) => output.push(chunk));
  child.stderr.on("data", (chunk) => output.push(chunk));
  const saveLog = () => writeFileSync(logFile, Buffer.concat(output));
  for (let waited = 0; ; waited += 250) {
    if (child.exitCode !== null) {
      saveLog();
      throw new Error(`wrangler dev exited early; see ${logFile}`);
    }
    try {
      if ((await fetch(`${BASE}/api/v1/openapi.json`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (waited > 60_000) throw new Error("wrangler dev did not answer within 60 s");
    await sleep(250);
  }
  const stop = () =>
    new Promise((resolve) => {
      saveLog();
      if (child.exitCode !== null) return resolve(undefined);
      child.on("exit", () => resolve(undefined));
      child.kill("SIGTERM");
    });
  return { businesses, stop, logFile };
}

// ---- The load.
/** @type {{ requests: number, byStatus: Map<number, number>, serverErrors: string[], reads: number, pushes: number, reports: number, intakeRuns: number }} */
const counts = { requests: 0, byStatus: new Map(), serverErrors: [], reads: 0, pushes: 0, reports: 0, intakeRuns: 0 };
/** @type {Array<{ businessIndex: number, eventId: string }>} */
const reportedEvents = []; // { businessIndex, eventId }
/** @type {Map<number, number>} */
const completions = new Map(); // business index → intake runs completed

/**
 * @param {string} path
 * @param {RequestInit} [init]
 * @returns {Promise<{ status: number, body: any }>}
 */
async function request(path, init = {}) {
  const response = await fetch(`${BASE}${path}`, init);
  const text = await response.text();
  counts.requests += 1;
  counts.byStatus.set(response.status, (counts.byStatus.get(response.status) ?? 0) + 1);
  if (response.status >= 500) counts.serverErrors.push(`${init.method ?? "GET"} ${path} → ${response.status} ${text}`);
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/**
 * @param {Business} business
 * @param {string} path
 * @param {RequestInit} [init]
 */
const partner = (business, path, init = {}) =>
  request(path, {
    ...init,
    headers: { Authorization: `Bearer ${business.apiKey}`, "Content-Type": "application/json", ...init.headers },
  });
/**
 * @param {string} path
 * @param {unknown} body
 */
const runtime = (path, body) =>
  request(path, {
    method: "POST",
    headers: { Authorization: `Bearer ${RUNTIME_TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

let nextBookingId = 700_000_000;
/** @param {number} id a new booking, created now, of the sample the tests report too */
function booking(id) {
  const { $comment: _, ...sample } = bookingSample;
  return { ...sample, id, created_at: new Date().toISOString() };
}

/** A token bucket per kind, so that reports and intake runs come at a steady rate whatever the connections do. */
/**
 * @param {number} perSecond
 * @param {number} startedAt
 */
function pacer(perSecond, startedAt) {
  let taken = 0;
  return () => {
    if (taken < ((Date.now() - startedAt) / 1000) * perSecond) {
      taken += 1;
      return true;
    }
    return false;
  };
}

/** @param {Business} business */
async function report(business) {
  const { status, body } = await runtime(`/internal/v1/businesses/${business.id}/events`, {
    booking: booking(nextBookingId++),
  });
  counts.reports += 1;
  if (status === 201)
    for (const { id } of body.events) reportedEvents.push({ businessIndex: business.index, eventId: id });
}

/** @param {Business} business */
async function intakeRun(business) {
  const conversation = `soak-${crypto.randomUUID()}`;
  const started = await runtime(`/internal/v1/conversations/${conversation}/intake`, {
    business_id: business.id,
    intake_id: business.intakeId,
    channel: "whatsapp",
    customer: { phone: "+31612345678" },
  });
  counts.intakeRuns += 1;
  if (started.status !== 201) return;
  const done = await runtime(`/internal/v1/conversations/${conversation}/intake/answers`, {
    answers: { full_name: "Soak Customer" },
  });
  if (done.body?.status === "completed") completions.set(business.index, (completions.get(business.index) ?? 0) + 1);
}

/** @typedef {{ index: number, id: string, apiKey: string, intakeId?: number }} Business */

const READS = ["/api/v1/me", "/api/v1/appointments?limit=100", "/api/v1/orders", "/api/v1/knowledge"];

/**
 * @param {Business[]} businesses
 * @param {number} deadline
 * @param {{ report: () => boolean, intake: () => boolean }} paced
 * @param {Map<number, number>} pushes
 */
async function connection(businesses, deadline, paced, pushes) {
  for (let n = 0; Date.now() < deadline; n++) {
    const business = businesses[Math.floor(Math.random() * businesses.length)];
    if (paced.report()) await report(business);
    else if (paced.intake()) await intakeRun(business);
    else if (n % 10 === 0 && (pushes.get(business.index) ?? 0) < PUSHES_PER_BUSINESS) {
      pushes.set(business.index, (pushes.get(business.index) ?? 0) + 1);
      counts.pushes += 1;
      await partner(business, `/api/v1/knowledge/soak-${n % 5}`, {
        method: "PUT",
        body: JSON.stringify({ title: "Opening hours", content: `Open from nine to five, version ${n}, every day.` }),
      });
    } else {
      counts.reads += 1;
      await partner(business, READS[n % READS.length]);
    }
  }
}

// ---- What arrived against what was expected.
/** @param {Business[]} businesses */
function tally(businesses) {
  let expected = 0;
  let lost = 0;
  for (const { businessIndex, eventId } of reportedEvents) {
    for (let e = 0; e < ENDPOINTS_PER_BUSINESS; e++) {
      expected += 1;
      if (!received.has(`/b${businessIndex}/e${e} ${eventId}`)) lost += 1;
    }
  }
  for (const business of businesses) {
    const completed = completions.get(business.index) ?? 0;
    for (let e = 0; e < ENDPOINTS_PER_BUSINESS; e++) {
      expected += completed;
      lost += Math.max(0, completed - (intakeEventsByPath.get(`/b${business.index}/e${e}`)?.size ?? 0));
    }
  }
  let duplicates = 0;
  let explained = 0;
  for (const times of arrivals.values()) {
    for (let i = 1; i < times.length; i++) {
      duplicates += 1;
      if (times[i] - times[i - 1] >= RETRY_GAP_MS) explained += 1;
    }
  }
  const deliveriesReceived = [...received.values()].reduce((sum, n) => sum + n, 0);
  return { expected, lost, deliveriesReceived, duplicates, unexplainedDuplicates: duplicates - explained };
}

async function main() {
  await new Promise((resolve) => receiver.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (receiver.address());
  const receiverUrl = `http://127.0.0.1:${port}`;
  const directory = mkdtempSync(join(tmpdir(), "secretary-soak-"));
  log(`Starting wrangler dev on ${BASE} (state in ${directory})...`);
  const worker = await startWorker(directory);
  let exitCode = 1;
  try {
    const { businesses } = worker;
    for (const business of businesses) {
      for (let e = 0; e < ENDPOINTS_PER_BUSINESS; e++) {
        const created = await partner(business, "/api/v1/webhooks", {
          method: "POST",
          body: JSON.stringify({ url: `${receiverUrl}/b${business.index}/e${e}`, events: ["*", "intake.completed"] }),
        });
        if (created.status !== 201) throw new Error(`endpoint not created: ${created.status}`);
      }
      const intakes = await partner(business, "/api/v1/intakes");
      business.intakeId = intakes.body.data[0]?.id;
      if (!business.intakeId) throw new Error("the seeded intake is missing");
    }
    log(`Load: ${CONNECTIONS} connections for ${DURATION_MS / 1000} s over ${BUSINESSES} businesses...`);
    const startedAt = Date.now();
    const paced = { report: pacer(REPORTS_PER_SECOND, startedAt), intake: pacer(INTAKES_PER_SECOND, startedAt) };
    const pushes = new Map();
    await Promise.all(
      Array.from({ length: CONNECTIONS }, () => connection(businesses, startedAt + DURATION_MS, paced, pushes)),
    );
    const loadSeconds = (Date.now() - startedAt) / 1000;
    log("Load done; waiting for the deliveries to drain (the sweep runs every 20 s)...");
    const drainStarted = Date.now();
    let lastSweep = drainStarted;
    while (Date.now() - drainStarted < DRAIN_MS && tally(businesses).lost > 0) {
      if (Date.now() - lastSweep >= 20_000) {
        await fetch(`${BASE}/cdn-cgi/handler/scheduled`).catch(() => undefined);
        lastSweep = Date.now();
      }
      await sleep(500);
    }
    // A last look for late duplicates.
    await sleep(2000);
    const result = tally(businesses);
    const summary = {
      seconds: Math.round(loadSeconds),
      connections: CONNECTIONS,
      requests: counts.requests,
      requests_per_second: Math.round(counts.requests / loadSeconds),
      statuses: Object.fromEntries(counts.byStatus),
      server_errors: counts.serverErrors.length,
      reads: counts.reads,
      knowledge_pushes: counts.pushes,
      reports: counts.reports,
      events_reported: reportedEvents.length,
      intake_runs: counts.intakeRuns,
      intakes_completed: [...completions.values()].reduce((sum, n) => sum + n, 0),
      deliveries_expected: result.expected,
      deliveries_received: result.deliveriesReceived,
      lost: result.lost,
      duplicates: result.duplicates,
      unexplained_duplicates: result.unexplainedDuplicates,
      drain_seconds: Math.round((Date.now() - drainStarted) / 1000),
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    for (const error of counts.serverErrors.slice(0, 10)) log(`5xx: ${error}`);
    const ok = summary.server_errors === 0 && summary.lost === 0 && summary.unexplained_duplicates === 0;
    log(ok ? "Soak passed." : `Soak FAILED (wrangler's output: ${worker.logFile}).`);
    exitCode = ok ? 0 : 1;
  } finally {
    await worker.stop();
    receiver.close();
    if (exitCode === 0) rmSync(directory, { recursive: true, force: true });
  }
  process.exitCode = exitCode;
}

await main();
