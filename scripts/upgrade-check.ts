// `npm run upgrade-check` (docs/scaling.md, From one database to shards; docs/operations.md, Upgrading from one
// database to shards): the upgrade from one database to regional shards, run on a populated copy in a temporary
// local state, with each check printed on stdout and a non-zero exit when any fails.
//   1. A database as it was before sharding: migrations 0000–0011 only (a copy of them, and a copy of wrangler.toml
//      that binds DB alone and points at them), populated as the seed did then: one business in it with its owner, a
//      legacy API key (no shard segment), bookings and orders (scripts/seed.ts, on the schema of migration 0011), and
//      a webhook endpoint; no directory row.
//   2. The upgrade: every migration on every database with the one command (scripts/migrate.ts, `applyMigrations`).
//   3. The current Worker on that state (scripts/local-worker.ts): the legacy key reads the same data, writes, a report
//      reaches the endpoints, the owner signs in, a new NL business lands in eu1 beside it; then the legacy business
//      moves to eu1 with the move command (scripts/move-business.ts), its old key still answers through the forward,
//      its data is in eu1 and its rows are gone from the legacy database.
// The temporary folder, the receiver and the Worker are removed on exit, on an error and on Ctrl-C (`cleanupOnExit`).
import { spawn } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isDeepStrictEqual } from "node:util";
import { count, eq, sql } from "drizzle-orm";
import { type ReceivedRequest, startReceiver } from "../test/receiver.ts";
import {
  cleanupOnExit,
  configCopy,
  executeLocalSql,
  type LocalWorker,
  log,
  makeTempDir,
  removeDir,
  reportedBooking,
  sleep,
  snapshotBundle,
  startLocalWorker,
  stopChildProcesses,
} from "./local-worker.ts";
import { applyMigrations } from "./migrate.ts";
import {
  businessIdFor,
  columnsAtMigration,
  DEMO_PASSWORD,
  insertSelect,
  ownerEmailFor,
  resultRows,
  seed,
  seedSql,
  tableAsMigrated,
} from "./seed.ts";
import { db, hashPassword, LEGACY_SHARD, newApiKey, SHARDS, schema, shardForCountry, sqlText } from "./service.ts";
import { LOCAL_ONLY_VARS, PROJECT_ROOT } from "./wrangler.ts";

// src/lib/signing.ts imports without extensions: loaded after scripts/service.ts has registered its resolve hook.
const { newSigningSecret } = await import("../src/lib/signing.ts");

/** Ports of their own (8780–8789), away from `npm start`'s 8787 and the bench's. */
const PORT = 8780;
const INSPECTOR_PORT = 8781;
const BASE = `http://127.0.0.1:${PORT}`;
const RUNTIME_TOKEN = "upgrade-check-runtime-token-0123456789abcdef";
const OPERATOR_TOKEN = "upgrade-check-operator-token-0123456789abcdef";
/** The last migration before sharding: 0012 adds the directory, 0013 the moves (docs/scaling.md, Migrations). */
const LAST_BEFORE_SHARDING = "0011";
const LEGACY_HANDLE = "legacy-salon";
const NEW_HANDLE = "new-nl-salon";
const NEW_COUNTRY = "NL";
/** How long a report's deliveries may take to arrive; the outbox sweep is run every 10 s meanwhile. */
const DELIVERY_TIMEOUT_MS = 60_000;

const { apiKeys, bookings, businessShards, businesses, credentialForwards, orders, owners, webhookEndpoints } = schema;

// ---- The checks: each printed as it is made; any failure makes the exit code 1.
let failures = 0;
function check(name: string, ok: boolean, detail = "") {
  if (!ok) failures += 1;
  process.stdout.write(`${ok ? "ok  " : "FAIL"}  ${name}${detail ? `: ${detail}` : ""}\n`);
}

// biome-ignore lint/suspicious/noExplicitAny: the answers are read as the API documents them
type Answer = { status: number; headers: Headers; body: any; text: string };
async function request(path: string, init: RequestInit = {}): Promise<Answer> {
  const response = await fetch(`${BASE}${path}`, { redirect: "manual", ...init });
  const text = await response.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    // A page, not JSON.
  }
  return { status: response.status, headers: response.headers, body, text };
}
const withKey = (key: string, path: string, init: RequestInit = {}) =>
  request(path, { ...init, headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" } });
const runtime = (path: string, body: unknown) =>
  request(path, {
    method: "POST",
    headers: { Authorization: `Bearer ${RUNTIME_TOKEN}`, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });

/** Runs one drizzle select in the database `binding` of the state and answers its rows. */
async function selectRows(
  persistTo: string,
  binding: string,
  statement: { toSQL: () => { sql: string; params: unknown[] } },
) {
  return resultRows(await executeLocalSql({ persistTo }, { binding, sql: sqlText(statement) })).at(-1) ?? [];
}

/** How many rows of the business each of its tables holds in one database. */
async function rowsOf(persistTo: string, binding: string, businessId: string) {
  const counted = (table: typeof bookings | typeof orders | typeof apiKeys | typeof webhookEndpoints | typeof owners) =>
    sql<number>`(${db.select({ n: count() }).from(table).where(eq(table.businessId, businessId))})`;
  const [row] = await selectRows(
    persistTo,
    binding,
    db
      .select({
        businesses: sql<number>`count(*)`.as("businesses"),
        owners: counted(owners).as("owners"),
        api_keys: counted(apiKeys).as("api_keys"),
        bookings: counted(bookings).as("bookings"),
        orders: counted(orders).as("orders"),
        webhook_endpoints: counted(webhookEndpoints).as("webhook_endpoints"),
      })
      .from(businesses)
      .where(eq(businesses.id, businessId)),
  );
  return row as Record<string, number>;
}

/** The owner signs in through the dashboard's form (a double-submit CSRF cookie) and opens the dashboard. */
async function ownerSignsIn(email: string, password: string) {
  const form = await request("/dashboard/sign-in");
  const csrfCookie = /(__Host-sign_in_csrf=[^;]+)/.exec(form.headers.get("set-cookie") ?? "")?.[1] ?? "";
  const csrfToken = /name="csrf_token" value="([^"]+)"/.exec(form.text)?.[1] ?? "";
  const signedIn = await request("/dashboard/sign-in", {
    method: "POST",
    headers: { Cookie: csrfCookie, Origin: BASE, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ csrf_token: csrfToken, email, password }),
  });
  const session = /(__Host-owner_session=[^;]+)/.exec(signedIn.headers.get("set-cookie") ?? "")?.[1];
  const dashboard = session ? await request("/dashboard", { headers: { Cookie: session } }) : undefined;
  return { status: signedIn.status, location: signedIn.headers.get("location"), dashboard };
}

/** The move command itself (scripts/move-business.ts), against the local Worker, with the run's operator token. */
function moveCommand(businessId: string, to: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const args = ["scripts/move-business.ts", "--business", businessId, "--to", to, "--base-url", BASE];
    const child = spawn(process.execPath, args, {
      cwd: PROJECT_ROOT,
      env: { ...process.env, OPERATOR_TOKEN },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.on("close", (code) => resolve({ code: code ?? 1, output: output.trim() }));
  });
}

async function main() {
  const cleanup = cleanupOnExit();
  let worker: LocalWorker | undefined;
  try {
    const directory = makeTempDir("secretary-upgrade-");
    cleanup.add(() => removeDir(directory));
    // Run before the folder's removal: a wrangler command stopped half way would write the state folder again.
    cleanup.add(() => stopChildProcesses());
    const persistTo = join(directory, "state");
    const arrived: ReceivedRequest[] = [];
    const receiver = await startReceiver({ onRequest: (request) => arrived.push(request), record: false });
    cleanup.add(() => receiver.close());

    // ---- 1. The database before sharding: migrations 0000–0011, DB alone, the state of the same database id.
    const oldMigrations = join(directory, "migrations-before-sharding");
    mkdirSync(oldMigrations);
    for (const file of readdirSync(join(PROJECT_ROOT, "migrations"))) {
      if (/^\d{4}_.*\.sql$/.test(file) && file.slice(0, 4) <= LAST_BEFORE_SHARDING) {
        copyFileSync(join(PROJECT_ROOT, "migrations", file), join(oldMigrations, file));
      }
    }
    const oldConfigPath = join(directory, "wrangler-before-sharding.toml");
    writeFileSync(
      oldConfigPath,
      configCopy(join(PROJECT_ROOT, "wrangler.toml"), [
        // The regional shards' blocks did not exist before sharding.
        [/\[\[d1_databases\]\]\nbinding = "SHARD_[^[]*/g, ""],
        [/(binding = "DB"[^[]*?migrations_dir = )"[^"]*"/, `$1${JSON.stringify(oldMigrations)}`],
      ]),
    );
    const old = { configPath: oldConfigPath, persistTo };
    log(`Building the database before sharding in ${persistTo} (migrations 0000–${LAST_BEFORE_SHARDING})...`);
    await applyMigrations(old);

    const legacyId = businessIdFor(LEGACY_HANDLE);
    const ownerEmail = ownerEmailFor(LEGACY_HANDLE);
    const legacyKey = newApiKey(LEGACY_SHARD);
    const columns = columnsAtMigration(LAST_BEFORE_SHARDING);
    const now = new Date();
    const seeded = resultRows(
      await executeLocalSql(old, {
        binding: SHARDS[LEGACY_SHARD].binding,
        sql: seedSql({
          handle: LEGACY_HANDLE,
          ownerEmail,
          passwordHash: await hashPassword(DEMO_PASSWORD),
          apiKey: legacyKey,
          now,
          columns,
        }),
      }),
    ).at(-1)?.[0];
    // The partner's endpoint, created with the legacy key as POST /webhooks did (principal: the key).
    const endpoint = insertSelect(
      tableAsMigrated(webhookEndpoints, columns),
      {
        businessId: apiKeys.businessId,
        url: sql`${`${receiver.url}/before-upgrade`}`,
        events: sql`${JSON.stringify(["*"])}`,
        description: sql`'Created before sharding'`,
        secret: sql`${newSigningSecret()}`,
        status: sql`'enabled'`,
        apiKeyId: apiKeys.id,
        createdAt: sql`${now.toISOString()}`,
      },
      apiKeys,
      eq(apiKeys.keyHash, legacyKey.keyHash),
    );
    await executeLocalSql(old, { binding: SHARDS[LEGACY_SHARD].binding, sql: sqlText(endpoint) });
    const before = await rowsOf(persistTo, SHARDS[LEGACY_SHARD].binding, legacyId);
    check(
      `before sharding: ${LEGACY_HANDLE} seeded in the one database with a legacy key (${legacyKey.displayPrefix}…)`,
      seeded?.business_id === legacyId && seeded?.key_stored === 1 && before.webhook_endpoints === 1,
      JSON.stringify(before),
    );

    // ---- 2. The upgrade: every migration on every database, with the project's configuration.
    log("Upgrading: applying every migration to every database (scripts/migrate.ts)...");
    await applyMigrations({ persistTo });
    const after = await rowsOf(persistTo, SHARDS[LEGACY_SHARD].binding, legacyId);
    check("after the migrations: the legacy database keeps the business's rows", isDeepStrictEqual(after, before));
    const listed = await selectRows(
      persistTo,
      SHARDS[LEGACY_SHARD].binding,
      db.select().from(businessShards).where(eq(businessShards.businessId, legacyId)),
    );
    check("after the migrations: the business is not in the directory, so in legacy", listed.length === 0);

    // ---- 3. The current Worker on that state, from a bundle taken now (edits to src/ meanwhile do not reload it).
    const { configPath } = await snapshotBundle(
      join(directory, "worker"),
      configCopy(join(PROJECT_ROOT, "wrangler.toml")),
    );
    log(`Starting the Worker on ${BASE}...`);
    worker = await startLocalWorker({
      port: PORT,
      inspectorPort: INSPECTOR_PORT,
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
      cleanup,
    });

    const me = await withKey(legacyKey.key, "/api/v1/me");
    check(
      "the legacy key answers GET /api/v1/me with its business",
      me.status === 200 && me.body?.id === legacyId && me.body?.handle === LEGACY_HANDLE,
      `${me.status}`,
    );
    const appointments = await withKey(legacyKey.key, "/api/v1/appointments?limit=100");
    const bookingIds = (appointments.body?.data ?? []).map((booking: { id: number }) => booking.id);
    check(
      "the legacy key answers GET /api/v1/appointments with the seeded bookings",
      appointments.status === 200 && bookingIds.length === before.bookings,
      `${appointments.status}, ${bookingIds.length} of ${before.bookings}`,
    );

    const created = await withKey(legacyKey.key, "/api/v1/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: `${receiver.url}/after-upgrade`, events: ["*"] }),
    });
    check("a write with the legacy key: POST /api/v1/webhooks", created.status === 201, `${created.status}`);

    const report = await runtime(`/internal/v1/businesses/${legacyId}/events`, {
      booking: reportedBooking(900_000_001),
    });
    check("a report through the runtime API for the legacy business", report.status === 201, `${report.status}`);
    const eventIds = new Set<string>((report.body?.events ?? []).map((event: { id: string }) => event.id));
    const deliveredTo = () =>
      new Set(
        arrived
          .filter((request) => {
            try {
              return eventIds.has(JSON.parse(request.body).id);
            } catch {
              return false;
            }
          })
          .map((request) => request.path),
      );
    const started = Date.now();
    for (let sweep = started; deliveredTo().size < 2 && Date.now() - started < DELIVERY_TIMEOUT_MS; await sleep(250)) {
      if (Date.now() - sweep >= 10_000) {
        await fetch(`${BASE}/cdn-cgi/handler/scheduled`).catch(() => undefined);
        sweep = Date.now();
      }
    }
    const paths = [...deliveredTo()].sort();
    check(
      "the report is delivered to the endpoints from before and after the upgrade",
      paths.includes("/before-upgrade") && paths.includes("/after-upgrade"),
      paths.join(", ") || "nothing arrived",
    );

    const signIn = await ownerSignsIn(ownerEmail, DEMO_PASSWORD);
    check(
      "the legacy owner signs in to the dashboard",
      signIn.status === 303 && signIn.location === "/dashboard" && signIn.dashboard?.status === 200,
      `${signIn.status} → ${signIn.location}, dashboard ${signIn.dashboard?.status}`,
    );

    log(`Seeding ${NEW_HANDLE} with --country ${NEW_COUNTRY}...`);
    const newcomer = await seed({ handle: NEW_HANDLE, country: NEW_COUNTRY, persistTo, log });
    const newMe = await withKey(newcomer.api_key, "/api/v1/me");
    check(
      `a new business seeded with --country ${NEW_COUNTRY} lands in ${shardForCountry(NEW_COUNTRY)}, its key answers`,
      newcomer.shard === shardForCountry(NEW_COUNTRY) &&
        newMe.status === 200 &&
        newMe.body?.id === newcomer.business_id,
      `shard ${newcomer.shard}, key ${newcomer.api_key.slice(0, 12)}…, ${newMe.status}`,
    );

    // ---- The legacy business moves to its region, later, with the move command. Its data as read just before
    // (the report added a booking) is what the old key must read after.
    const meBeforeMove = await withKey(legacyKey.key, "/api/v1/me");
    const appointmentsBeforeMove = await withKey(legacyKey.key, "/api/v1/appointments?limit=100");
    const move = await moveCommand(legacyId, "eu1");
    check(`the move command moves ${LEGACY_HANDLE} from legacy to eu1`, move.code === 0, move.output);
    const meMoved = await withKey(legacyKey.key, "/api/v1/me");
    check(
      "after the move: the old legacy key answers GET /api/v1/me, the same",
      meMoved.status === 200 && isDeepStrictEqual(meMoved.body, meBeforeMove.body),
      `${meMoved.status}`,
    );
    const appointmentsMoved = await withKey(legacyKey.key, "/api/v1/appointments?limit=100");
    check(
      "after the move: GET /api/v1/appointments answers the same bookings",
      appointmentsMoved.status === 200 && isDeepStrictEqual(appointmentsMoved.body, appointmentsBeforeMove.body),
      `${appointmentsMoved.status}, ${appointmentsMoved.body?.data?.length} bookings`,
    );
    const write = await withKey(legacyKey.key, "/api/v1/webhooks", {
      method: "POST",
      body: JSON.stringify({ url: `${receiver.url}/after-move`, events: ["*"] }),
    });
    check("after the move: a write with the old key (POST /api/v1/webhooks)", write.status === 201, `${write.status}`);
    const signInMoved = await ownerSignsIn(ownerEmail, DEMO_PASSWORD);
    check(
      "after the move: the owner signs in again",
      signInMoved.status === 303 && signInMoved.dashboard?.status === 200,
      `${signInMoved.status}, dashboard ${signInMoved.dashboard?.status}`,
    );

    // The databases, read once the Worker is stopped.
    await worker.stop();
    const gone = await rowsOf(persistTo, SHARDS[LEGACY_SHARD].binding, legacyId);
    check(
      "after the move: the business's rows are gone from the legacy database",
      Object.values(gone).every((n) => n === 0),
      JSON.stringify(gone),
    );
    const [forwards] = await selectRows(
      persistTo,
      SHARDS[LEGACY_SHARD].binding,
      db
        // Aliased: drizzle writes a one-table select's columns by their own names, which the answer is read by.
        .select({ n: count().as("n"), shard: sql<string>`${credentialForwards.shard}`.as("shard") })
        .from(credentialForwards)
        .where(eq(credentialForwards.credentialHash, legacyKey.keyHash)),
    );
    check(
      "after the move: the legacy database forwards the old key to eu1",
      forwards?.n === 1 && forwards?.shard === "eu1",
      JSON.stringify(forwards),
    );
    const moved = await rowsOf(persistTo, SHARDS.eu1.binding, legacyId);
    check(
      "after the move: eu1 holds the business's rows",
      moved.businesses === 1 &&
        // The seeded bookings, and the one the report added.
        moved.bookings === before.bookings + 1 &&
        moved.orders === before.orders &&
        moved.api_keys === before.api_keys &&
        moved.webhook_endpoints === before.webhook_endpoints + 2,
      JSON.stringify(moved),
    );
    const [entry] = await selectRows(
      persistTo,
      SHARDS[LEGACY_SHARD].binding,
      db
        .select({
          shard: sql<string>`${businessShards.shard}`.as("shard"),
          moving: sql<string | null>`${businessShards.movingSince}`.as("moving"),
        })
        .from(businessShards)
        .where(eq(businessShards.businessId, legacyId)),
    );
    check(
      "after the move: the directory names eu1, no move under way",
      entry?.shard === "eu1" && entry?.moving === null,
      JSON.stringify(entry),
    );
  } catch (error) {
    failures += 1;
    log(`The upgrade check stopped: ${error instanceof Error ? error.message : String(error)}`);
    if (worker) log(`wrangler dev's last lines:\n${worker.output().trim().split("\n").slice(-20).join("\n")}`);
  } finally {
    await cleanup.run();
  }
  process.stdout.write(failures === 0 ? "Upgrade check passed.\n" : `Upgrade check FAILED: ${failures} check(s).\n`);
  process.exitCode = failures === 0 ? 0 : 1;
}

await main();
