// `npm run soak` (docs/reliability.md): `wrangler dev` under a minute of mixed load at 32 connections, then a count
// of what reached a real receiver. Reads, knowledge pushes, reports that fan out to 20 endpoints each, and intake
// runs whose completions reach the same 20. It runs on its own copy of the configuration (the request budget
// raised, loopback URLs allowed) and its own local state in a temporary folder, so the dev database is untouched.
// The businesses alternate between the EU and the US, so between the shards eu1 and us1 (docs/scaling.md, Regional
// shards): each request, report, intake run and delivery finds its own shard's database.
// Exits non-zero on any 5xx, any delivery lost, or any duplicate that a retry does not explain.
import { parseArgs } from "node:util";
import { eq, sql } from "drizzle-orm";
import { type ReceivedRequest, startReceiver } from "../test/receiver.ts";
import {
  appConfigForLoad,
  log,
  makeTempDir,
  prepareLocalState,
  removeDir,
  reportedBooking,
  type SeedFile,
  sleep,
  snapshotBundle,
  startLocalWorker,
} from "./local-worker.ts";
import { businessIdFor, businessSeedSql, directorySql, insertSelect, ownerEmailFor } from "./seed.ts";
import { LEGACY_SHARD, newApiKey, SHARDS, type ShardName, schema, shardForCountry, sqlText } from "./service.ts";

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
/** The countries the businesses take in turn: one in the EU (shard eu1), one elsewhere (us1). */
const COUNTRIES = ["NL", "US"];
/** Below the 120 knowledge pushes a business may make in a clock hour (spec: Limits). */
const PUSHES_PER_BUSINESS = 100;
/** How long the deliveries may take to drain after the load; the sweep runs every 20 s meanwhile. */
const DRAIN_MS = 240_000;
/** A retry comes at least a minute after the attempt it repeats (spec: retries after 1, 5, 30... minutes). */
const RETRY_GAP_MS = 55_000;
const RUNTIME_TOKEN = "soak-runtime-token-0123456789abcdef";
/** The move's credential (docs/operations.md, Moving a business), which the Worker has in production too. */
const OPERATOR_TOKEN = "soak-operator-token-0123456789abcdef";

// ---- The receiver (test/receiver.ts): every delivery, by endpoint path and event id, and every delivery's arrival
// times, by endpoint path and delivery id: a delivery id is unique only within its shard (docs/scaling.md, The queue,
// the consumer and the cron), and each path is one business's endpoint, so of one shard. A body that is not JSON is
// counted by nobody.
const received = new Map<string, number>(); // `${path} ${eventId}` → count
const arrivals = new Map<string, number[]>(); // `${path} ${deliveryId}` → [ms, ...]
const intakeEventsByPath = new Map<string, Set<string>>(); // path → Set of intake.completed event ids
function record({ path, body, headers, arrivedAt }: ReceivedRequest) {
  let envelope: { id: string; event: string };
  try {
    envelope = JSON.parse(body);
  } catch {
    return;
  }
  const key = `${path} ${envelope.id}`;
  received.set(key, (received.get(key) ?? 0) + 1);
  const delivery = `${path} ${String(headers["x-service-delivery"])}`;
  arrivals.set(delivery, [...(arrivals.get(delivery) ?? []), arrivedAt]);
  if (envelope.event === "intake.completed") {
    const ids = intakeEventsByPath.get(path) ?? new Set();
    ids.add(envelope.id);
    intakeEventsByPath.set(path, ids);
  }
}

// ---- The Worker, on its own configuration and state (scripts/local-worker.ts).
/** One business per handle, with an API key and an intake already switched on by its owner, for its shard. */
async function businessSql({ handle, apiKey, country }: Business) {
  const now = new Date().toISOString();
  const { apiKeys, intakes } = schema;
  const fields = [{ id: "full_name", label: "What is your name?", type: "text" as const, required: true }];
  const content = { title: "Quote", description: "When a customer asks for a quote.", fields };
  const intake = insertSelect(
    intakes,
    {
      businessId: sql`${businessIdFor(handle)}`,
      name: sql`'soak_quote'`,
      title: sql`${content.title}`,
      description: sql`${content.description}`,
      fields: sql`${JSON.stringify(fields)}`,
      enabled: sql`1`,
      version: sql`1`,
      approvedVersion: sql`1`,
      approvedContent: sql`${JSON.stringify(content)}`,
      apiKeyId: apiKeys.id,
      createdAt: sql`${now}`,
      updatedAt: sql`${now}`,
    },
    apiKeys,
    eq(apiKeys.keyHash, apiKey.keyHash),
  );
  return `${await businessSeedSql(handle, apiKey, new Date(now), country)}\n${sqlText(intake)}\n`;
}

/**
 * The seed files: the directory entries in the global database first, then one file per shard with its businesses,
 * as the service lists a new business (src/domain/access/directory.ts).
 */
async function seedFiles(businesses: Business[]): Promise<SeedFile[]> {
  const listings = businesses.map(({ id, shard, handle }) => ({
    businessId: id,
    shard,
    ownerEmail: ownerEmailFor(handle),
  }));
  const files: SeedFile[] = [{ binding: SHARDS[LEGACY_SHARD].binding, sql: directorySql(listings, new Date()) }];
  for (const shard of new Set(businesses.map((business) => business.shard))) {
    const sqls = await Promise.all(businesses.filter((b) => b.shard === shard).map(businessSql));
    files.push({ binding: SHARDS[shard].binding, sql: sqls.join("\n") });
  }
  return files;
}

async function startWorker(directory: string) {
  const businesses: Business[] = [];
  for (let i = 1; i <= BUSINESSES; i++) {
    const handle = `soak-shop-${i}`;
    const country = COUNTRIES[(i - 1) % COUNTRIES.length] ?? "US";
    const shard = shardForCountry(country);
    businesses.push({ index: i, id: businessIdFor(handle), apiKey: newApiKey(shard), handle, country, shard });
  }
  // The per-credential budget of 600 a minute would refuse most of the load: raised for the run only.
  const { configPath } = await snapshotBundle(directory, appConfigForLoad().config);
  const persistTo = `${directory}/state`;
  await prepareLocalState({ configPath, persistTo }, await seedFiles(businesses));
  const shards = businesses.map(({ handle, shard }) => `${handle} in ${shard}`).join(", ");
  log(`Seeded ${shards}.`);
  const worker = await startLocalWorker({
    port: PORT,
    configPath,
    persistTo,
    noBundle: true,
    vars: {
      BASE_URL: BASE,
      ALLOW_LOOPBACK_URLS: "true",
      LOCAL_DURABLE_OBJECT_JURISDICTIONS: "emulated",
      RUNTIME_TOKEN,
      OPERATOR_TOKEN,
    },
    args: ["--test-scheduled"],
    logFile: `${directory}/wrangler-dev.log`,
  });
  return { businesses, logFile: `${directory}/wrangler-dev.log`, ...worker };
}

// ---- The load.
const counts: {
  requests: number;
  byStatus: Map<number, number>;
  serverErrors: string[];
  reads: number;
  pushes: number;
  reports: number;
  intakeRuns: number;
} = { requests: 0, byStatus: new Map(), serverErrors: [], reads: 0, pushes: 0, reports: 0, intakeRuns: 0 };
const reportedEvents: Array<{ businessIndex: number; eventId: string }> = []; // { businessIndex, eventId }
const completions = new Map<number, number>(); // business index → intake runs completed

// biome-ignore lint/suspicious/noExplicitAny: the answers are read as the API documents them
async function request(path: string, init: RequestInit = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${BASE}${path}`, init);
  const text = await response.text();
  counts.requests += 1;
  counts.byStatus.set(response.status, (counts.byStatus.get(response.status) ?? 0) + 1);
  if (response.status >= 500) counts.serverErrors.push(`${init.method ?? "GET"} ${path} → ${response.status} ${text}`);
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

const partner = (business: Business, path: string, init: RequestInit = {}) =>
  request(path, {
    ...init,
    headers: { Authorization: `Bearer ${business.apiKey.key}`, "Content-Type": "application/json", ...init.headers },
  });
const runtime = (path: string, body: unknown) =>
  request(path, {
    method: "POST",
    headers: { Authorization: `Bearer ${RUNTIME_TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

let nextBookingId = 700_000_000;

/** A token bucket per kind, so that reports and intake runs come at a steady rate whatever the connections do. */
function pacer(perSecond: number, startedAt: number) {
  let taken = 0;
  return () => {
    if (taken < ((Date.now() - startedAt) / 1000) * perSecond) {
      taken += 1;
      return true;
    }
    return false;
  };
}

async function report(business: Business) {
  const { status, body } = await runtime(`/internal/v1/businesses/${business.id}/events`, {
    booking: reportedBooking(nextBookingId++),
  });
  counts.reports += 1;
  if (status === 201)
    for (const { id } of body.events) reportedEvents.push({ businessIndex: business.index, eventId: id });
}

async function intakeRun(business: Business) {
  const conversation = `soak-${crypto.randomUUID()}`;
  const intake = `/internal/v1/businesses/${business.id}/conversations/${conversation}/intake`;
  const started = await runtime(intake, {
    intake_id: business.intakeId,
    channel: "whatsapp",
    customer: { phone: "+31612345678" },
  });
  counts.intakeRuns += 1;
  if (started.status !== 201) return;
  const done = await runtime(`${intake}/answers`, {
    answers: { full_name: "Soak Customer" },
  });
  if (done.body?.status === "completed") completions.set(business.index, (completions.get(business.index) ?? 0) + 1);
}

type Business = {
  index: number;
  id: string;
  apiKey: ReturnType<typeof newApiKey>;
  handle: string;
  country: string;
  shard: ShardName;
  intakeId?: number;
};

const READS = ["/api/v1/me", "/api/v1/appointments?limit=100", "/api/v1/orders", "/api/v1/knowledge"];

async function connection(
  businesses: Business[],
  deadline: number,
  paced: { report: () => boolean; intake: () => boolean },
  pushes: Map<number, number>,
) {
  for (let n = 0; Date.now() < deadline; n++) {
    const business = businesses[Math.floor(Math.random() * businesses.length)];
    if (!business) throw new Error("no business to load");
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
      await partner(business, READS[n % READS.length] ?? "/api/v1/me");
    }
  }
}

// ---- What arrived against what was expected.
function tally(businesses: Business[]) {
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
      if ((times[i] ?? 0) - (times[i - 1] ?? 0) >= RETRY_GAP_MS) explained += 1;
    }
  }
  const deliveriesReceived = [...received.values()].reduce((sum, n) => sum + n, 0);
  return { expected, lost, deliveriesReceived, duplicates, unexplainedDuplicates: duplicates - explained };
}

async function main() {
  const receiver = await startReceiver({ onRequest: record, record: false });
  const receiverUrl = receiver.url;
  const directory = makeTempDir("secretary-soak-");
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
    const pushes = new Map<number, number>();
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
      businesses_by_shard: Object.fromEntries(
        [...new Set(businesses.map((b) => b.shard))].map((shard) => [
          shard,
          businesses.filter((b) => b.shard === shard).length,
        ]),
      ),
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
    await receiver.close();
    if (exitCode === 0) removeDir(directory);
  }
  process.exitCode = exitCode;
}

await main();
