// `npm run soak` (docs/reliability.md): `wrangler dev` under a minute of mixed load at 32 connections, then a count
// of what reached a real receiver. Reads, knowledge pushes, reports that fan out to 20 endpoints each and the app's 3,
// and intake runs whose completions reach the same 20. It runs on its own copy of the configuration (the request budget
// raised, loopback URLs allowed) and its own local state in a temporary folder, so the dev database is untouched.
// The businesses alternate between the EU and the US, so between the shards eu1 and us1 (docs/scaling.md, Regional
// shards): each request, report, intake run and delivery finds its own shard's database.
// Midway through the load the first business moves to another shard with the operator token (docs/scaling.md, Moving
// a business between shards), intake runs under way: while it moves, its writes answer 503 with Retry-After, which
// the load honours (a refused report or intake call is sent again after it); after the load, its rows are counted in
// both shards.
// Beside each business's own endpoints, one app connected to every business subscribes 3 endpoints of its own
// (docs/guides/webhooks.md, Subscribing once as an app), copied into each business: every report reaches them too, once
// per business, each envelope naming its business and signed with the app endpoint's secret, the moved business's
// after its move as before. Every delivery's signatures are checked with its endpoint's secret.
// Exits non-zero on any other 5xx, any delivery lost, any duplicate that a retry does not explain, a signature that
// does not verify, an app delivery not meant for the app, a move that does not end, no app delivery of the moved
// business after it, or a moved business's row left behind or missing.
import { parseArgs } from "node:util";
import { eq, getTableColumns, getTableName, is, sql } from "drizzle-orm";
import { SQLiteTable } from "drizzle-orm/sqlite-core";
import { signatureHeaders } from "../src/lib/signing.ts";
import { type ReceivedRequest, startReceiver } from "../test/receiver.ts";
import {
  appConfigForLoad,
  executeLocalSql,
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
import { businessIdFor, businessSeedSql, directorySql, insertSelect, ownerEmailFor, resultRows } from "./seed.ts";
import {
  db,
  isShardName,
  LEGACY_SHARD,
  newApiKey,
  SHARDS,
  type ShardName,
  schema,
  sha256Hex,
  shardForCountry,
  sqlText,
} from "./service.ts";
import { LOCAL_ONLY_VARS } from "./wrangler.ts";

const { values: args } = parseArgs({
  options: {
    duration: { type: "string", default: "60" },
    connections: { type: "string", default: "32" },
    businesses: { type: "string", default: "4" },
    "reports-per-second": { type: "string", default: "4" },
    "intakes-per-second": { type: "string", default: "1" },
    port: { type: "string", default: "8797" },
    "move-to": { type: "string", default: "us1" },
  },
});
const DURATION_MS = Number(args.duration) * 1000;
const CONNECTIONS = Number(args.connections);
const BUSINESSES = Number(args.businesses);
const REPORTS_PER_SECOND = Number(args["reports-per-second"]);
const INTAKES_PER_SECOND = Number(args["intakes-per-second"]);
const PORT = Number(args.port);
/** Where the first business (eu1's) moves midway: by default out of the EU, so its runs under way are handed over. */
const MOVE_TO = args["move-to"];
/** Intake runs of the moving business started just before its move and answered while it moves, then after. */
const RUNS_UNDER_WAY = 3;
/**
 * How many times the move is run when it aborts with a mismatch: as the operators do (docs/operations.md, Moving a
 * business), once more at once, then a third time.
 */
const MOVE_ATTEMPTS = 3;
const BASE = `http://127.0.0.1:${PORT}`;
const ENDPOINTS_PER_BUSINESS = 20;
/** The countries the businesses take in turn: one in the EU (shard eu1), one elsewhere (us1). */
const COUNTRIES = ["NL", "US"];
/** Below the 120 knowledge pushes a business may make in a clock hour (docs/guides/knowledge.md, Limits). */
const PUSHES_PER_BUSINESS = 100;
/** How long the deliveries may take to drain after the load; the sweep runs every 20 s meanwhile. */
const DRAIN_MS = 240_000;
/**
 * A retry comes at least a minute after the attempt it repeats (docs/guides/webhooks.md, Answering, retries and the
 * schedule).
 */
const RETRY_GAP_MS = 55_000;
const RUNTIME_TOKEN = "soak-runtime-token-0123456789abcdef";
/** The move's credential (docs/operations.md, Moving a business), which the Worker has in production too. */
const OPERATOR_TOKEN = "soak-operator-token-0123456789abcdef";
/**
 * The app connected to every business with the only scope of a connection, `api` (docs/guides/oauth.md): a confidential
 * client, which asks for its own token with the scope `app` (The app as itself), and its own endpoints on the
 * receiver's paths `/app/e<n>`, which every business's copy of one shares.
 */
const APP = { id: "cl_soak_app", secret: `cs_soak_${crypto.randomUUID()}`, endpoints: 3, paths: "/app/" };

// ---- The receiver (test/receiver.ts), the businesses' own endpoints (`/b<i>/e<n>`) and the app's (`/app/e<n>`) apart:
// every delivery, by the business its envelope names, endpoint path and event id, and every delivery's arrival times,
// by business, path and delivery id: every business's copy of an app endpoint has its path, and a delivery id is unique
// only within its business's shard (docs/scaling.md, The queue, the consumer and the cron). A body that is not JSON
// is counted by nobody.
type Mailbox = {
  received: Map<string, number>; // `${businessId} ${path} ${eventId}` → count
  arrivals: Map<string, number[]>; // `${businessId} ${path} ${deliveryId}` → [ms, ...]
  badSignatures: number;
};
const mailbox = (): Mailbox => ({ received: new Map(), arrivals: new Map(), badSignatures: 0 });
const mailboxes = { business: mailbox(), app: mailbox() };
const secrets = new Map<string, string>(); // endpoint path → its signing secret
const verifications: Promise<void>[] = [];
const intakeEvents = new Map<string, Set<string>>(); // `${businessId} ${path}` → Set of intake.completed event ids

/** Whether both signatures of a delivery are those the service makes with `secret` (src/lib/signing.ts). */
async function signedWith(secret: string | undefined, body: string, headers: Record<string, string>) {
  if (secret === undefined) return false;
  const id = String(headers["webhook-id"]);
  const expected = await signatureHeaders([secret], id, body, Number(headers["webhook-timestamp"]));
  return (
    expected["webhook-signature"] === headers["webhook-signature"] &&
    expected["X-Service-Signature"] === headers["x-service-signature"]
  );
}

function record({ path, body, headers, arrivedAt }: ReceivedRequest) {
  let envelope: { id: string; event: string; business?: { id?: string } };
  try {
    envelope = JSON.parse(body);
  } catch {
    return;
  }
  const box = mailboxes[path.startsWith(APP.paths) ? "app" : "business"];
  const to = `${envelope.business?.id} ${path}`;
  const key = `${to} ${envelope.id}`;
  box.received.set(key, (box.received.get(key) ?? 0) + 1);
  const delivery = `${to} ${String(headers["x-service-delivery"])}`;
  box.arrivals.set(delivery, [...(box.arrivals.get(delivery) ?? []), arrivedAt]);
  if (envelope.event === "intake.completed") {
    const ids = intakeEvents.get(to) ?? new Set();
    ids.add(envelope.id);
    intakeEvents.set(to, ids);
  }
  verifications.push(
    signedWith(secrets.get(path), body, headers).then((verified) => {
      if (!verified) box.badSignatures += 1;
    }),
  );
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
 * The seed files: the directory entries and the app's client in the global database first, then one file per shard
 * with its businesses, as the service lists a new business (src/domain/access/directory.ts), and the app connected to
 * each as an owner's approval leaves it (src/domain/oauth/authorization.ts, `approveAuthorization`): the client's copy
 * and the business's connection. No code, and no `app.connected`, which none of the app's endpoints, made later, hears.
 */
async function seedFiles(businesses: Business[]): Promise<SeedFile[]> {
  const now = new Date();
  const listings = businesses.map(({ id, shard, handle }) => ({
    businessId: id,
    shard,
    ownerEmail: ownerEmailFor(handle),
  }));
  const { oauthClients, oauthGrants } = schema;
  const client = sqlText(
    db
      .insert(oauthClients)
      .values({
        id: APP.id,
        clientName: "Soak App",
        redirectUris: ["https://soak-app.example/callback"],
        tokenEndpointAuthMethod: "client_secret_basic",
        secretHash: sha256Hex(APP.secret),
        createdAt: now.toISOString(),
        firstApprovedAt: now.toISOString(),
      })
      .onConflictDoNothing(),
  );
  const files: SeedFile[] = [
    { binding: SHARDS[LEGACY_SHARD].binding, sql: `${directorySql(listings, now)}\n${client}\n` },
  ];
  for (const shard of new Set(businesses.map((business) => business.shard))) {
    const inShard = businesses.filter((b) => b.shard === shard);
    const connections = db
      .insert(oauthGrants)
      .values(
        inShard.map(({ id }) => ({ clientId: APP.id, businessId: id, scope: "api", createdAt: now.toISOString() })),
      );
    const sqls = await Promise.all(inShard.map(businessSql));
    files.push({ binding: SHARDS[shard].binding, sql: [...sqls, client, sqlText(connections)].join("\n") });
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
  // What the seed gave the business that is to move, before the Worker holds the state.
  const [mover] = businesses;
  const seeded = mover ? await rowsIn({ configPath, persistTo }, mover.shard, mover) : {};
  const worker = await startLocalWorker({
    port: PORT,
    configPath,
    persistTo,
    noBundle: true,
    vars: {
      BASE_URL: BASE,
      ...LOCAL_ONLY_VARS,
      RUNTIME_TOKEN,
      OPERATOR_TOKEN,
    },
    args: ["--test-scheduled"],
    logFile: `${directory}/wrangler-dev.log`,
  });
  return { businesses, seeded, logFile: `${directory}/wrangler-dev.log`, where: { configPath, persistTo }, ...worker };
}

// ---- The load.
/** Whose request it is: the business, and what kind of call, for the 503s its move may answer. */
type Caller = { business: Business; kind: "partner write" | "report" | "intake call" };

const counts: {
  requests: number;
  byStatus: Map<number, number>;
  serverErrors: string[];
  refusedWhileMoving: Map<Caller["kind"], number>;
  retriedAfterMove: number;
  reads: number;
  pushes: number;
  reports: number;
  intakeRuns: number;
} = {
  requests: 0,
  byStatus: new Map(),
  serverErrors: [],
  refusedWhileMoving: new Map(),
  retriedAfterMove: 0,
  reads: 0,
  pushes: 0,
  reports: 0,
  intakeRuns: 0,
};
const reportedEvents: Array<{ business: Business; eventId: string }> = [];
const completions = new Map<number, number>(); // business index → intake runs completed
const bookingsReported = new Map<number, number>(); // business index → bookings its reports created

/** The move midway (docs/scaling.md, Moving a business between shards): whose, when, and each step's answer. */
const moving: {
  business?: Business;
  from?: ShardName;
  startedAt?: number;
  endedAt?: number;
  /** When it ended on the receiver's clock (`performance.now()`), which times the arrivals. */
  endedAtArrival?: number;
  steps: Array<{ status: number; phase: string }>;
  answer?: { rows_copied: number; tables: Record<string, number> };
  /** The sentence of each abort: a move that found the business's rows changed, and undid its copy. */
  aborts: string[];
  failure?: string;
  /** What the business's writes answered between two of its steps, before the switch. */
  probes: Record<string, number>;
} = { steps: [], aborts: [], probes: {} };

/**
 * A 503 with Retry-After that the move explains: a write of the moving business sent before its move ended, answered
 * after it began. Any other 5xx fails the soak.
 */
const refusedByTheMove = (caller: Caller | undefined, sentAt: number, response: Response) =>
  response.status === 503 &&
  response.headers.get("Retry-After") !== null &&
  caller?.business === moving.business &&
  moving.startedAt !== undefined &&
  Date.now() >= moving.startedAt &&
  (moving.endedAt === undefined || sentAt <= moving.endedAt);

// biome-ignore lint/suspicious/noExplicitAny: the answers are read as the API documents them
type Answer = { status: number; body: any; retryAfter: number | undefined };

async function request(path: string, init: RequestInit = {}, caller?: Caller): Promise<Answer> {
  const sentAt = Date.now();
  const response = await fetch(`${BASE}${path}`, init);
  const text = await response.text();
  counts.requests += 1;
  counts.byStatus.set(response.status, (counts.byStatus.get(response.status) ?? 0) + 1);
  if (caller && refusedByTheMove(caller, sentAt, response)) {
    counts.refusedWhileMoving.set(caller.kind, (counts.refusedWhileMoving.get(caller.kind) ?? 0) + 1);
  } else if (response.status >= 500) {
    counts.serverErrors.push(`${init.method ?? "GET"} ${path} → ${response.status} ${text}`);
  }
  const retryAfter = response.headers.get("Retry-After");
  return {
    status: response.status,
    body: text ? JSON.parse(text) : null,
    retryAfter: retryAfter === null ? undefined : Number(retryAfter),
  };
}

/**
 * Sends a call until it is not a 503 with Retry-After, waiting as long as each says: how a client rides out a move.
 * `first` learns what the first sending answered.
 */
async function untilAccepted(send: () => Promise<Answer>, first?: (status: number) => void) {
  let answer = await send();
  first?.(answer.status);
  while (answer.status === 503 && answer.retryAfter !== undefined) {
    counts.retriedAfterMove += 1;
    await sleep(answer.retryAfter * 1000);
    answer = await send();
  }
  return answer;
}

const partner = (business: Business, path: string, init: RequestInit = {}, caller?: Caller) =>
  request(
    path,
    {
      ...init,
      headers: { Authorization: `Bearer ${business.apiKey.key}`, "Content-Type": "application/json", ...init.headers },
    },
    caller,
  );
const runtime = (path: string, body: unknown, caller?: Caller) =>
  request(
    path,
    {
      method: "POST",
      headers: { Authorization: `Bearer ${RUNTIME_TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify(body),
    },
    caller,
  );

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

/** A new booking reported, and reported again after any 503 of a move: each report counted is delivered. */
async function report(business: Business, first?: (status: number) => void) {
  const booking = reportedBooking(nextBookingId++);
  const path = `/internal/v1/businesses/${business.id}/events`;
  counts.reports += 1;
  const send = () => runtime(path, { booking }, { business, kind: "report" });
  const { status, body } = await untilAccepted(send, first);
  if (status !== 201) return;
  bookingsReported.set(business.index, (bookingsReported.get(business.index) ?? 0) + 1);
  for (const { id } of body.events) reportedEvents.push({ business, eventId: id });
}

/** A conversation's intake: its start, and the answer that completes it (each sent again after a 503 of a move). */
function conversation(business: Business) {
  const path = `/internal/v1/businesses/${business.id}/conversations/soak-${crypto.randomUUID()}/intake`;
  const caller: Caller = { business, kind: "intake call" };
  const start = { intake_id: business.intakeId, channel: "whatsapp", customer: { phone: "+31612345678" } };
  const answers = { answers: { full_name: "Soak Customer" } };
  return {
    start: () => runtime(path, start, caller),
    answer: () => runtime(`${path}/answers`, answers, caller),
    completed: () => completions.set(business.index, (completions.get(business.index) ?? 0) + 1),
  };
}

async function intakeRun(business: Business) {
  const run = conversation(business);
  counts.intakeRuns += 1;
  if ((await untilAccepted(run.start)).status !== 201) return;
  if ((await untilAccepted(run.answer)).body?.status === "completed") run.completed();
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

/** A knowledge push: a partner write, which a move refuses. */
const push = (business: Business, n: number) =>
  partner(
    business,
    `/api/v1/knowledge/soak-${n % 5}`,
    {
      method: "PUT",
      body: JSON.stringify({ title: "Opening hours", content: `Open from nine to five, version ${n}, every day.` }),
    },
    { business, kind: "partner write" },
  );

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
      await push(business, n);
    } else {
      counts.reads += 1;
      await partner(business, READS[n % READS.length] ?? "/api/v1/me");
    }
  }
}

// ---- What arrived against what was expected.
/**
 * What reached one mailbox: every arrival; those beyond the first of an event at an endpoint, of which a retry explains
 * those of one delivery at least RETRY_GAP_MS apart; and the moved business's arrivals after its move.
 */
function arrivalsIn({ received, arrivals, badSignatures }: Mailbox) {
  let explained = 0;
  let acrossTheMove = 0;
  let afterTheMove = 0;
  const moved = moving.business && `${moving.business.id} `;
  const end = moving.endedAtArrival ?? Number.POSITIVE_INFINITY;
  for (const [delivery, times] of arrivals) {
    const ofTheMoved = moved !== undefined && delivery.startsWith(moved);
    if (ofTheMoved) afterTheMove += times.filter((time) => time > end).length;
    for (let i = 1; i < times.length; i++) {
      const [earlier = 0, later = 0] = [times[i - 1], times[i]];
      // A delivery of the moved business that arrived before the move ended and again after it was not retried: its
      // first attempt's record did not move with it. Never explained, however far apart.
      if (ofTheMoved && earlier < end && later > end) acrossTheMove += 1;
      else if (later - earlier >= RETRY_GAP_MS) explained += 1;
    }
  }
  const arrived = [...received.values()].reduce((sum, n) => sum + n, 0);
  // Every arrival of an event at an endpoint beyond its first is a duplicate; only a retry of one delivery explains one.
  const duplicates = arrived - received.size;
  return {
    received: arrived,
    duplicates,
    unexplainedDuplicates: duplicates - explained,
    acrossTheMove,
    afterTheMove,
    badSignatures,
  };
}

/**
 * Each business's reported events at its 20 endpoints and its completed intakes' there, and its reported events at each
 * of the app's endpoints (never an `intake.completed`: the business's intakes are its API key's, not the app's;
 * docs/guides/webhooks.md, Subscribing once as an app); any other arrival at the app's is not meant for it.
 */
function tally(businesses: Business[]) {
  const paths = (prefix: string, n: number) => Array.from({ length: n }, (_, e) => `${prefix}e${e}`);
  const appPaths = paths(APP.paths, APP.endpoints);
  const own = { expected: 0, lost: 0 };
  const app = { expected: 0, lost: 0 };
  const meantForTheApp = new Set<string>();
  for (const { business, eventId } of reportedEvents) {
    for (const path of paths(`/b${business.index}/`, ENDPOINTS_PER_BUSINESS)) {
      own.expected += 1;
      if (!mailboxes.business.received.has(`${business.id} ${path} ${eventId}`)) own.lost += 1;
    }
    for (const path of appPaths) {
      const key = `${business.id} ${path} ${eventId}`;
      meantForTheApp.add(key);
      app.expected += 1;
      if (!mailboxes.app.received.has(key)) app.lost += 1;
    }
  }
  for (const business of businesses) {
    const completed = completions.get(business.index) ?? 0;
    for (const path of paths(`/b${business.index}/`, ENDPOINTS_PER_BUSINESS)) {
      own.expected += completed;
      own.lost += Math.max(0, completed - (intakeEvents.get(`${business.id} ${path}`)?.size ?? 0));
    }
  }
  const appKeys = [...mailboxes.app.received.keys()];
  const byBusiness = Object.fromEntries(
    businesses.map(({ id, handle }) => [handle, appKeys.filter((key) => key.startsWith(`${id} `)).length]),
  );
  const notMeant = appKeys.filter((key) => !meantForTheApp.has(key)).length;
  return {
    business: { ...own, ...arrivalsIn(mailboxes.business) },
    app: { ...app, byBusiness, notMeant, ...arrivalsIn(mailboxes.app) },
  };
}

// ---- The move midway (docs/operations.md, Moving a business).
const OPERATOR = { Authorization: `Bearer ${OPERATOR_TOKEN}`, "Content-Type": "application/json" };

/**
 * At `at`, moves `business` to MOVE_TO with the operator token, step after step until its 200, with RUNS_UNDER_WAY
 * intake runs started just before. After its first step, before the switch, a partner write, a report and each run's
 * answer are sent once and must answer 503 with Retry-After; the report goes on in `background` and is sent again
 * after the move. Once moved, the runs are answered again, and complete in the new shard.
 */
async function moveMidway(business: Business, at: number, background: Promise<unknown>[]) {
  await sleep(Math.max(0, at - Date.now()));
  const underWay = [];
  for (let n = 0; n < RUNS_UNDER_WAY; n++) {
    const run = conversation(business);
    counts.intakeRuns += 1;
    if ((await untilAccepted(run.start)).status === 201) underWay.push(run);
  }
  Object.assign(moving, { business, from: business.shard, startedAt: Date.now() });
  log(`Moving ${business.handle} from ${business.shard} to ${MOVE_TO}, ${underWay.length} intake runs under way...`);
  const path = `/internal/v1/businesses/${business.id}/move`;
  while (!moving.answer && !moving.failure && moving.aborts.length < MOVE_ATTEMPTS) {
    for (;;) {
      const step = await request(path, { method: "POST", headers: OPERATOR, body: JSON.stringify({ to: MOVE_TO }) });
      moving.steps.push({ status: step.status, phase: step.body?.status ?? step.body?.code });
      if (step.status === 200) moving.answer = step.body;
      else if (step.body?.code === "move_mismatch") moving.aborts.push(step.body.error);
      else if (step.status !== 202) moving.failure = `${step.status} ${JSON.stringify(step.body)}`;
      if (step.status !== 202) break;
      if (moving.steps.length === 1 && ["copying", "verifying"].includes(step.body.status)) {
        counts.pushes += 1;
        moving.probes["partner write"] = (await push(business, 0)).status;
        const reported = new Promise<number>((resolve) => background.push(report(business, resolve)));
        moving.probes.report = await reported;
        for (const [n, run] of underWay.entries())
          moving.probes[`intake answer ${n + 1}`] = (await run.answer()).status;
      }
    }
  }
  moving.endedAt = Date.now();
  moving.endedAtArrival = performance.now();
  if (moving.answer) business.shard = MOVE_TO as ShardName;
  for (const run of underWay) if ((await untilAccepted(run.answer)).body?.status === "completed") run.completed();
}

/** The global database's tables (docs/scaling.md, Regional shards): the directory, which a move does not copy. */
const GLOBAL_TABLES = new Set(["business_shards", "business_moves", "owner_emails"]);

/**
 * How many rows of the business each table keyed by business holds in `shard`, its deliveries' attempts, its copies of
 * the app's endpoints, and the forwards of its API key: read from the local state once the Worker is stopped.
 */
async function rowsIn(where: { configPath: string; persistTo: string }, shard: ShardName, business: Business) {
  const { credentialForwards, deliveryAttempts, webhookDeliveries, webhookEndpoints } = schema;
  const counted = Object.values(schema as Record<string, unknown>)
    .filter((value): value is SQLiteTable => is(value, SQLiteTable))
    .flatMap((table) => {
      const name = getTableName(table);
      const columns: Record<string, unknown> = getTableColumns(table);
      const owner = name === "businesses" ? columns.id : columns.businessId;
      if (!owner || GLOBAL_TABLES.has(name)) return [];
      return [sql`(select count(*) from ${table} where ${owner} = ${business.id}) as ${sql.identifier(name)}`];
    });
  const ofBusiness = sql`select ${webhookDeliveries.id} from ${webhookDeliveries} where ${webhookDeliveries.businessId} = ${business.id}`;
  const statement = sql`select ${sql.join(
    [
      ...counted,
      sql`(select count(*) from ${deliveryAttempts} where ${deliveryAttempts.deliveryId} in (${ofBusiness})) as delivery_attempts`,
      sql`(select count(*) from ${webhookEndpoints} where ${webhookEndpoints.businessId} = ${business.id} and ${webhookEndpoints.appEndpointId} is not null) as app_endpoint_copies`,
      sql`(select count(*) from ${credentialForwards} where ${credentialForwards.credentialHash} = ${business.apiKey.keyHash}) as credential_forwards`,
    ],
    sql`, `,
  )}`;
  const printed = await executeLocalSql(where, { binding: SHARDS[shard].binding, sql: sqlText(statement) });
  return (resultRows(printed).at(-1)?.[0] ?? {}) as Record<string, number>;
}

/**
 * What the moved business's rows must be once the load is over, from what the seed gave it (`seeded`): none left in the
 * shard it left but its key's forward; in its new shard its 20 endpoints and its copies of the app's, the seeded
 * bookings and one more per report that created one, a response per run completed, an event for each of those, a
 * delivery of each to each of its endpoints and of each booking's to each copy, and every other table's rows as seeded
 * (its app connection among them). Answers the differences found, and the counts.
 */
async function movedRows(where: { configPath: string; persistTo: string }, seeded: Record<string, number>) {
  const { business, from } = moving;
  if (!business || !from) return { problems: ["no business moved"], left: {}, arrived: {} };
  const left = await rowsIn(where, from, business);
  const arrived = await rowsIn(where, business.shard, business);
  const bookings = bookingsReported.get(business.index) ?? 0;
  const responses = completions.get(business.index) ?? 0;
  const changedByTheLoad: Record<string, number | undefined> = {
    webhook_endpoints: ENDPOINTS_PER_BUSINESS + APP.endpoints,
    app_endpoint_copies: APP.endpoints,
    bookings: (seeded.bookings ?? 0) + bookings,
    intake_responses: (seeded.intake_responses ?? 0) + responses,
    events: (seeded.events ?? 0) + bookings + responses,
    webhook_deliveries:
      (seeded.webhook_deliveries ?? 0) + ENDPOINTS_PER_BUSINESS * (bookings + responses) + APP.endpoints * bookings,
    // At least one attempt per delivery, more where one was retried; the pushes replace the seeded knowledge.
    delivery_attempts: undefined,
    knowledge_items: undefined,
    credential_forwards: 0,
  };
  const expected = { ...seeded, ...changedByTheLoad };
  const problems = [
    ...Object.entries(left)
      .filter(([table, n]) => n !== (table === "credential_forwards" ? 1 : 0))
      .map(([table, n]) => `${from} holds ${n} of its ${table}`),
    ...Object.entries(expected)
      .filter(([table, n]) => n !== undefined && arrived[table] !== n)
      .map(([table, n]) => `${business.shard} holds ${arrived[table]} of its ${table}, not ${n}`),
  ];
  if ((arrived.delivery_attempts ?? 0) < (arrived.webhook_deliveries ?? 0)) {
    problems.push(`${business.shard} holds fewer attempts than deliveries`);
  }
  return { problems, left, arrived };
}

/**
 * The app's endpoints, made through the API as the app itself (docs/guides/oauth.md, The app as itself): its token from
 * the client credentials grant, then each endpoint, which the service copies into every business connected to it.
 * Subscribed as the businesses' own are: the app's copies must not receive their intakes' `intake.completed`.
 */
async function subscribeTheApp(receiverUrl: string) {
  const token = await request("/api/oauth/token", {
    method: "POST",
    headers: {
      Authorization: `Basic ${btoa(`${APP.id}:${APP.secret}`)}`,
      "Content-Type": "application/x-www-form-urlencoded",
    },
    body: new URLSearchParams({ grant_type: "client_credentials", scope: "app" }).toString(),
  });
  if (token.status !== 200) throw new Error(`no app token: ${token.status} ${JSON.stringify(token.body)}`);
  for (let e = 0; e < APP.endpoints; e++) {
    const path = `${APP.paths}e${e}`;
    const created = await request("/api/v1/app/webhooks", {
      method: "POST",
      headers: { Authorization: `Bearer ${token.body.access_token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ url: `${receiverUrl}${path}`, events: ["*", "intake.completed"] }),
    });
    if (created.status !== 201) throw new Error(`app endpoint not created: ${created.status}`);
    secrets.set(path, created.body.secret);
  }
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
    // The app's first: its copies must leave each business room for 20 endpoints of its own.
    await subscribeTheApp(receiverUrl);
    for (const business of businesses) {
      for (let e = 0; e < ENDPOINTS_PER_BUSINESS; e++) {
        const path = `/b${business.index}/e${e}`;
        const created = await partner(business, "/api/v1/webhooks", {
          method: "POST",
          body: JSON.stringify({ url: `${receiverUrl}${path}`, events: ["*", "intake.completed"] }),
        });
        if (created.status !== 201) throw new Error(`endpoint not created: ${created.status}`);
        secrets.set(path, created.body.secret);
      }
      const intakes = await partner(business, "/api/v1/intakes");
      business.intakeId = intakes.body.data[0]?.id;
      if (!business.intakeId) throw new Error("the seeded intake is missing");
    }
    const [mover] = businesses;
    if (!mover || !isShardName(MOVE_TO) || MOVE_TO === mover.shard) {
      throw new Error(`--move-to must name a shard other than ${mover?.shard}: ${Object.keys(SHARDS).join(", ")}.`);
    }
    const businessesByShard = Object.fromEntries(
      [...new Set(businesses.map((b) => b.shard))].map((shard) => [
        shard,
        businesses.filter((b) => b.shard === shard).length,
      ]),
    );
    log(`Load: ${CONNECTIONS} connections for ${DURATION_MS / 1000} s over ${BUSINESSES} businesses...`);
    const startedAt = Date.now();
    const paced = { report: pacer(REPORTS_PER_SECOND, startedAt), intake: pacer(INTAKES_PER_SECOND, startedAt) };
    const pushes = new Map<number, number>();
    const background: Promise<unknown>[] = [];
    await Promise.all([
      ...Array.from({ length: CONNECTIONS }, () => connection(businesses, startedAt + DURATION_MS, paced, pushes)),
      moveMidway(mover, startedAt + DURATION_MS / 2, background),
    ]);
    await Promise.all(background);
    // Until the last request refused by the move was sent again and answered.
    const loadSeconds = (Date.now() - startedAt) / 1000;
    log("Load done; waiting for the deliveries to drain (the sweep runs every 20 s)...");
    const drainStarted = Date.now();
    let lastSweep = drainStarted;
    const lost = () => {
      const { business, app } = tally(businesses);
      return business.lost + app.lost;
    };
    while (Date.now() - drainStarted < DRAIN_MS && lost() > 0) {
      if (Date.now() - lastSweep >= 20_000) {
        await fetch(`${BASE}/cdn-cgi/handler/scheduled`).catch(() => undefined);
        lastSweep = Date.now();
      }
      await sleep(500);
    }
    // A last look for late duplicates.
    await sleep(2000);
    await Promise.all(verifications);
    const { business: own, app } = tally(businesses);
    const drainSeconds = Math.round((Date.now() - drainStarted) / 1000);
    await worker.stop();
    const rows = await movedRows(worker.where, worker.seeded);
    const summary = {
      seconds: Math.round(loadSeconds),
      connections: CONNECTIONS,
      businesses_by_shard: businessesByShard,
      requests: counts.requests,
      requests_per_second: Math.round(counts.requests / loadSeconds),
      statuses: Object.fromEntries(counts.byStatus),
      server_errors: counts.serverErrors.length,
      refused_while_moving: Object.fromEntries(counts.refusedWhileMoving),
      sent_again_after_503: counts.retriedAfterMove,
      reads: counts.reads,
      knowledge_pushes: counts.pushes,
      reports: counts.reports,
      events_reported: reportedEvents.length,
      intake_runs: counts.intakeRuns,
      intakes_completed: [...completions.values()].reduce((sum, n) => sum + n, 0),
      deliveries_expected: own.expected,
      deliveries_received: own.received,
      lost: own.lost,
      duplicates: own.duplicates,
      unexplained_duplicates: own.unexplainedDuplicates,
      duplicates_across_the_move: own.acrossTheMove,
      bad_signatures: own.badSignatures,
      app_endpoints: {
        endpoints: APP.endpoints,
        connected_businesses: businesses.length,
        deliveries_expected: app.expected,
        deliveries_received: app.received,
        deliveries_by_business: app.byBusiness,
        lost: app.lost,
        not_meant_for_the_app: app.notMeant,
        duplicates: app.duplicates,
        unexplained_duplicates: app.unexplainedDuplicates,
        duplicates_across_the_move: app.acrossTheMove,
        bad_signatures: app.badSignatures,
      },
      drain_seconds: drainSeconds,
      move: {
        business: moving.business?.handle,
        from: moving.from,
        to: MOVE_TO,
        at_second: Math.round(((moving.startedAt ?? 0) - startedAt) / 1000),
        seconds: ((moving.endedAt ?? 0) - (moving.startedAt ?? 0)) / 1000,
        steps: moving.steps.length,
        aborted_with_a_mismatch: moving.aborts.length,
        phases: moving.steps.map((step) => step.phase).join(", "),
        rows_copied: moving.answer?.rows_copied,
        tables: moving.answer?.tables,
        refusals_while_under_way: moving.probes,
        rows_left_in_old_shard: rows.left,
        rows_in_new_shard: rows.arrived,
        arrivals_after_it: { business_endpoints: own.afterTheMove, app_endpoints: app.afterTheMove },
      },
    };
    process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
    for (const error of counts.serverErrors.slice(0, 10)) log(`5xx: ${error}`);
    for (const abort of moving.aborts) log(`The move aborted: ${abort}`);
    if (moving.failure) log(`The move failed: ${moving.failure}`);
    if (!moving.answer && !moving.failure) log(`The move did not end in ${MOVE_ATTEMPTS} runs.`);
    for (const problem of rows.problems) log(`After the move: ${problem}`);
    const probes = Object.values(moving.probes);
    if (probes.length === 0) log("The move ended in its first step: nothing was sent while it was under way.");
    for (const [call, status] of Object.entries(moving.probes)) {
      if (status !== 503) log(`While the move was under way, the ${call} answered ${status}, not 503.`);
    }
    if (app.afterTheMove === 0) log("No delivery of the moved business reached the app's endpoints after its move.");
    const ok =
      summary.server_errors === 0 &&
      own.lost + app.lost === 0 &&
      own.unexplainedDuplicates + app.unexplainedDuplicates === 0 &&
      own.badSignatures + app.badSignatures === 0 &&
      app.notMeant === 0 &&
      app.afterTheMove > 0 &&
      moving.answer !== undefined &&
      rows.problems.length === 0 &&
      probes.length > 0 &&
      probes.every((status) => status === 503);
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
