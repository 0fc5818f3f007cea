// What `npm run soak` and `npm run bench` share: a `wrangler dev` of their own (a copy of a wrangler.toml with its
// paths made absolute, the local state in a temporary folder, seeded through `wrangler d1 execute --file` as
// scripts/seed.mjs does, the Worker bundled once at the start), the SQL of a seeded business with a known API key,
// new bookings to report, and a Node receiver for webhook deliveries. Neither run touches the dev database in
// .wrangler/state, and neither is upset by edits to src/ while it runs.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { constants, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import bookingSample from "../test/fixtures/booking.json" with { type: "json" };
import { DEMO_PASSWORD, hashPassword, seedSql } from "./seed.mjs";
import { offlineEnv, PROJECT_ROOT, runWranglerCaptured, WRANGLER_BIN } from "./wrangler.mjs";

/** The per-credential budget of a load run: far above what two cores can send in a minute, so it never refuses. */
export const RAISED_REQUEST_BUDGET = 1_000_000;

/** How long `wrangler dev` may take to answer its first request (a cold bundle of the app takes a few seconds). */
const READY_TIMEOUT_MS = 60_000;

/** @param {string} message */
export const log = (message) => process.stderr.write(`${message}\n`);
/** @param {number} ms */
export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
/** @param {string} text */
export const sha256Hex = (text) => createHash("sha256").update(text, "utf8").digest("hex");

/** @param {string} prefix e.g. "secretary-bench-" */
export const makeTempDir = (prefix) => mkdtempSync(join(tmpdir(), prefix));

/** @param {string} directory */
export const removeDir = (directory) => rmSync(directory, { recursive: true, force: true });

/**
 * The text of the wrangler.toml at `configPath`, to be written in another folder: its paths made absolute (wrangler
 * resolves them against the config's own folder): `main`, `migrations_dir`, the assets' `directory`, and any other
 * value written as a relative path (`./…`, `../…`, such as the targets of `[alias]`). Then each replacement is
 * applied; one whose pattern no longer matches is an error, so that a renamed setting is never silently left as it was.
 * @param {string} configPath
 * @param {Array<[RegExp, string]>} [replacements]
 */
export function configCopy(configPath, replacements = []) {
  /** @type {(line: string, key: string, value: string) => string} */
  const absolute = (_, key, value) => `${key} = ${JSON.stringify(resolve(dirname(configPath), value))}`;
  let config = readFileSync(configPath, "utf8")
    .replace(/^(main|migrations_dir|directory) = "([^"]*)"$/gm, absolute)
    .replace(/^(\S+) = "(\.\.?\/[^"]*)"$/gm, absolute);
  for (const [pattern, replacement] of replacements) {
    if (!pattern.test(config)) {
      throw new Error(`${configPath} no longer has ${pattern}: update scripts/local-worker.mjs.`);
    }
    config = config.replace(pattern, replacement);
  }
  return config;
}

/** The `[[ratelimits]]` block of PRINCIPAL_RATE_LIMIT up to its limit, so that no other rate limit is touched. */
const PRINCIPAL_BUDGET = /(name = "PRINCIPAL_RATE_LIMIT"[^[]*?simple = \{ limit = )(\d+)(, period = 60 \})/;

/**
 * The app's wrangler.toml for a load run: the general per-credential budget (600 a minute) raised to
 * {@link RAISED_REQUEST_BUDGET}, or it would refuse most of the load. Answers the budget it replaced too, for the
 * script to say what it changed.
 */
export function appConfigForLoad() {
  const configPath = join(PROJECT_ROOT, "wrangler.toml");
  const original = PRINCIPAL_BUDGET.exec(readFileSync(configPath, "utf8"))?.[2];
  const config = configCopy(configPath, [[PRINCIPAL_BUDGET, `$1${RAISED_REQUEST_BUDGET}$3`]]);
  return { config, originalBudget: Number(original) };
}

/**
 * The seed of one business on the Business plan (scripts/seed.mjs: owner, demo bookings and orders, an owner
 * knowledge source) whose API key is `apiKey`.
 * @param {string} handle
 * @param {string} apiKey
 * @param {Date} now
 */
export function businessSeedSql(handle, apiKey, now) {
  return seedSql({
    handle,
    plan: "business",
    ownerEmail: `owner@${handle}.example`,
    passwordHash: hashPassword(DEMO_PASSWORD),
    apiKey: { hash: sha256Hex(apiKey), displayPrefix: apiKey.slice(0, 12) },
    now,
  });
}

/** @param {number} id a new booking, created now, of the sample the tests report too (test/fixtures/booking.json) */
export function reportedBooking(id) {
  const { $comment: _, ...sample } = bookingSample;
  return { ...sample, id, created_at: new Date().toISOString() };
}

/**
 * What must not outlive a run (wrangler dev, the receiver, temporary folders), undone last added first when the run
 * ends, and also on SIGINT or SIGTERM, after which the process exits with 128 + the signal's number. A step added
 * while the cleanup runs (a Worker that was still starting) is undone too before it ends.
 */
export function cleanupOnExit() {
  /** @type {Array<() => unknown>} */
  const steps = [];
  /** @type {Promise<void> | undefined} */
  let running;
  const run = () => {
    running ??= (async () => {
      for (let step = steps.pop(); step; step = steps.pop()) {
        try {
          await step();
        } catch (error) {
          log(`Cleaning up: ${error instanceof Error ? error.message : String(error)}`);
        }
      }
    })();
    return running;
  };
  /** @param {NodeJS.Signals} signal */
  const onSignal = (signal) => {
    log(`${signal}: stopping...`);
    void run().finally(() => process.exit(128 + (constants.signals[signal] ?? 0)));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return {
    /** @param {() => unknown} step */
    add: (step) => {
      steps.push(step);
    },
    run,
  };
}

/** @typedef {ReturnType<typeof cleanupOnExit>} Cleanup */

/** A port free on 127.0.0.1 right now (the system's pick). */
async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  await new Promise((resolve) => server.close(() => resolve(undefined)));
  return port;
}

/**
 * Bundles the Worker of the configuration at `configPath` as its sources are now (`wrangler deploy --dry-run`), and
 * points the configuration at the bundle. wrangler dev rebuilds and reloads the Worker on every change to its
 * sources, which drops the queue's in-memory messages and the requests under way: a run on a snapshot is not upset
 * by someone editing src/ meanwhile, and measures one version of the code from start to end.
 * @param {string} configPath
 * @param {string} config its text
 */
async function bundleSnapshot(configPath, config) {
  const outdir = join(dirname(configPath), "bundle");
  await runWranglerCaptured(["deploy", "--dry-run", "--outdir", outdir, "-c", configPath]);
  const main = /^main = "([^"]*)"$/m.exec(config)?.[1];
  const bundle = main && join(outdir, basename(main).replace(/\.[cm]?[jt]sx?$/, ".js"));
  if (!bundle || !existsSync(bundle)) {
    throw new Error(`wrangler deploy --dry-run left no bundle of ${main} in ${outdir}`);
  }
  writeFileSync(configPath, config.replace(/^main = .*$/m, `main = ${JSON.stringify(bundle)}`));
  return bundle;
}

/**
 * @typedef {{ baseUrl: string, bundle: string, logFile: string, stop: () => Promise<void>,
 *   cpuSeconds: () => number | null }} LocalWorker
 */

/** Linux's clock ticks a second, the unit of /proc/<pid>/stat's CPU times (`getconf CLK_TCK`). */
const CLOCK_TICKS = 100;

/**
 * The CPU time (user and system, in seconds) spent so far by the process `root` and every process under it: for a
 * `wrangler dev`, wrangler itself and its two workerd processes (the proxy in front and the one that runs the
 * Worker, its D1, Durable Objects and queues). Null where there is no /proc (not Linux).
 * @param {number} root
 */
function treeCpuSeconds(root) {
  if (!existsSync("/proc/self/stat")) return null;
  /** @type {Map<number, { parent: number, ticks: number }>} */
  const processes = new Map();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // The fields after the command's closing parenthesis: state, ppid, ..., utime (12th), stime (13th).
      const fields = readFileSync(`/proc/${entry}/stat`, "utf8").split(") ").pop()?.split(" ") ?? [];
      processes.set(Number(entry), { parent: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // The process ended while being read.
    }
  }
  let ticks = 0;
  const pending = [root];
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    ticks += processes.get(pid)?.ticks ?? 0;
    for (const [child, { parent }] of processes) if (parent === pid) pending.push(child);
  }
  return ticks / CLOCK_TICKS;
}

/**
 * Applies the migrations to a fresh local state in `directory`, runs each seed (SQL text) in it, bundles the Worker
 * as it is now, then starts `wrangler dev` on that bundle on 127.0.0.1:`port` and waits until `readyPath` answers
 * 2xx. `cleanup`, when given, learns how to stop it as soon as it is started, so that a signal during the wait stops
 * it too.
 * @param {{ directory: string, config: string, port: number, readyPath: string, devVars?: Record<string, string>,
 *   seeds?: string[], devArgs?: string[], cleanup?: Cleanup }} options
 * @returns {Promise<LocalWorker>}
 */
export async function startLocalWorker({ directory, config, port, readyPath, devVars, seeds = [], devArgs, cleanup }) {
  mkdirSync(directory, { recursive: true });
  const configPath = join(directory, "wrangler.toml");
  writeFileSync(configPath, config);
  if (devVars) {
    // wrangler reads the .dev.vars next to the configuration it is given.
    const lines = Object.entries(devVars).map(([name, value]) => `${name}=${value}\n`);
    writeFileSync(join(directory, ".dev.vars"), lines.join(""), { mode: 0o600 });
  }
  const where = ["-c", configPath, "--persist-to", join(directory, "state")];
  await runWranglerCaptured(["d1", "migrations", "apply", "DB", "--local", ...where]);
  for (const [i, sql] of seeds.entries()) {
    const file = join(directory, `seed-${i + 1}.sql`);
    writeFileSync(file, sql, { mode: 0o600 });
    await runWranglerCaptured(["d1", "execute", "DB", "--local", ...where, "--file", file]);
  }
  const bundle = await bundleSnapshot(configPath, config);

  const baseUrl = `http://127.0.0.1:${port}`;
  // Each wrangler dev wants its own devtools port (9229 by default): two at once would fail to start.
  const inspectorPort = await freePort();
  const logFile = join(directory, "wrangler-dev.log");
  /** @type {Buffer[]} */
  const output = [];
  const child = spawn(
    WRANGLER_BIN,
    [
      ...["dev", ...where, "--port", String(port), "--ip", "127.0.0.1", "--inspector-port", String(inspectorPort)],
      ...["--no-bundle", "--log-level", "warn", ...(devArgs ?? [])],
    ],
    { cwd: PROJECT_ROOT, env: offlineEnv(), stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout.on("data", (chunk) => output.push(chunk));
  child.stderr.on("data", (chunk) => output.push(chunk));
  const saveLog = () => writeFileSync(logFile, Buffer.concat(output));
  const stop = () =>
    new Promise((resolve) => {
      saveLog();
      if (child.exitCode !== null || child.signalCode !== null) return resolve(undefined);
      // Stopping wrangler's own PID stops the workerd it started; a wrangler that hangs is killed after 5 s.
      const force = setTimeout(() => child.kill("SIGKILL"), 5000);
      child.once("exit", () => {
        clearTimeout(force);
        resolve(undefined);
      });
      child.kill("SIGTERM");
    }).then(() => undefined);
  cleanup?.add(stop);

  const tail = () => Buffer.concat(output).toString("utf8").trim().split("\n").slice(-15).join("\n");
  for (let waited = 0; ; waited += 250) {
    if (child.exitCode !== null) {
      saveLog();
      throw new Error(`wrangler dev (${configPath}) exited early:\n${tail()}`);
    }
    try {
      if ((await fetch(`${baseUrl}${readyPath}`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (waited > READY_TIMEOUT_MS) {
      await stop();
      throw new Error(`wrangler dev (${configPath}) did not answer within ${READY_TIMEOUT_MS / 1000} s:\n${tail()}`);
    }
    await sleep(250);
  }
  return { baseUrl, bundle, logFile, stop, cpuSeconds: () => (child.pid ? treeCpuSeconds(child.pid) : null) };
}

/**
 * @typedef {{ path: string, envelope: any, headers: import("node:http").IncomingHttpHeaders, arrivedAt: number }}
 *   Delivery
 */

/**
 * A webhook receiver on 127.0.0.1 (a free port) that answers every request 200 at once and hands each JSON body to
 * `onDelivery` with its path, headers and arrival (`performance.now()`, when the whole body is in). A body that is
 * not JSON is answered all the same and counted by nobody.
 * @param {(delivery: Delivery) => void} onDelivery
 * @returns {Promise<{ url: string, close: () => Promise<void> }>}
 */
export async function startReceiver(onDelivery) {
  const server = createServer((request, response) => {
    /** @type {Buffer[]} */
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const arrivedAt = performance.now();
      /** @type {unknown} */
      let envelope;
      try {
        envelope = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      } catch {
        envelope = undefined;
      }
      if (envelope !== undefined)
        onDelivery({ path: request.url ?? "/", envelope, headers: request.headers, arrivedAt });
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end('{"ok":true}');
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(undefined)));
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}
