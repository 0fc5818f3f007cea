// The one way to run the Worker locally: `wrangler dev` offline (scripts/wrangler.ts) on a port and an inspector port
// of its own, on the project's wrangler.toml or a copy, with a local state folder, variables given with `--var`, and
// a stop that ends wrangler and the workerd it started. `npm start` (scripts/start.ts) runs it in the foreground;
// the browser tests (test-e2e/local-worker.ts), the soak (scripts/soak.ts) and the bench (scripts/bench.ts) start it
// in the background and wait until it answers. Also what those runs share: a fresh local state with every database
// migrated and seeded (`prepareLocalState`), a configuration copy in a temporary folder (`configCopy`,
// `appConfigForLoad`), a bundle taken once so that edits to src/ meanwhile do not reload the Worker
// (`snapshotBundle`), and a cleanup on exit and on Ctrl-C (`cleanupOnExit`).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { constants, tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import bookingSample from "../test/fixtures/booking.json" with { type: "json" };
import { applyMigrations } from "./migrate.ts";
import { offlineEnv, PROJECT_ROOT, runWranglerCaptured, WRANGLER_BIN, whereArgs } from "./wrangler.ts";

/** The per-credential budget of a load run: far above what two cores can send in a minute, so it never refuses. */
export const RAISED_REQUEST_BUDGET = 1_000_000;

/** How long `wrangler dev` may take to answer its first request (a cold bundle of the app takes a few seconds). */
const READY_TIMEOUT_MS = 60_000;

/** How long a stopped wrangler may take to end with its workerd before the whole group is killed. */
const STOP_GRACE_MS = 5_000;

export const log = (message: string) => process.stderr.write(`${message}\n`);
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** @param prefix e.g. "secretary-bench-" */
export const makeTempDir = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));
export const removeDir = (directory: string) => rmSync(directory, { recursive: true, force: true });

/**
 * The text of the wrangler.toml at `configPath`, to be written in another folder: its paths made absolute (wrangler
 * resolves them against the config's own folder): `main`, `migrations_dir`, the assets' `directory`, and any other
 * value written as a relative path (`./…`, `../…`, such as the targets of `[alias]`). Then each replacement is
 * applied; one whose pattern no longer matches is an error, so that a renamed setting is never silently left as it was.
 */
export function configCopy(configPath: string, replacements: Array<[RegExp, string]> = []): string {
  const absolute = (_: string, key: string, value: string) =>
    `${key} = ${JSON.stringify(resolve(dirname(configPath), value))}`;
  let config = readFileSync(configPath, "utf8")
    .replace(/^(main|migrations_dir|directory) = "([^"]*)"$/gm, absolute)
    .replace(/^(\S+) = "(\.\.?\/[^"]*)"$/gm, absolute);
  for (const [pattern, replacement] of replacements) {
    if (!pattern.test(config)) {
      throw new Error(`${configPath} no longer has ${pattern}: update scripts/local-worker.ts.`);
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

/** A new booking, created now, of the sample the tests report too (test/fixtures/booking.json). */
export function reportedBooking(id: number) {
  const { $comment: _, ...sample } = bookingSample;
  return { ...sample, id, created_at: new Date().toISOString() };
}

export type Cleanup = { add: (step: () => unknown) => void; run: () => Promise<void> };

/**
 * What must not outlive a run (wrangler dev, the receiver, temporary folders), undone last added first when the run
 * ends, and also on SIGINT or SIGTERM, after which the process exits with 128 + the signal's number. A step added
 * while the cleanup runs (a Worker that was still starting) is undone too before it ends.
 */
export function cleanupOnExit(): Cleanup {
  const steps: Array<() => unknown> = [];
  let running: Promise<void> | undefined;
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
  const onSignal = (signal: NodeJS.Signals) => {
    log(`${signal}: stopping...`);
    void run().finally(() => process.exit(128 + (constants.signals[signal] ?? 0)));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  return { add: (step) => void steps.push(step), run };
}

/** A port free on 127.0.0.1 right now (the system's pick). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** An SQL file to run in one database (its binding, src/db/shards.ts), as one D1 batch. */
export type SeedFile = { binding: string; sql: string };

/**
 * Runs `sql` in the database `binding` of the local state of `where` (the project's `.wrangler/state` unless a
 * folder is given), as one D1 batch (a single transaction). Answers what `--json` printed: one result per statement.
 */
export async function executeLocalSql(
  where: { configPath?: string; persistTo?: string },
  { binding, sql }: SeedFile,
): Promise<string> {
  const directory = makeTempDir("secretary-seed-");
  try {
    const file = join(directory, "seed.sql");
    writeFileSync(file, sql, { mode: 0o600 });
    const args = ["d1", "execute", binding, "--local", ...whereArgs(where), "--file", file, "--json"];
    return (await runWranglerCaptured(args)).stdout;
  } finally {
    removeDir(directory);
  }
}

/**
 * Applies the migrations to every database of the local state of `where` (scripts/migrate.ts), then runs each seed
 * file in its database, in order. Answers what each printed.
 */
export async function prepareLocalState(
  where: { configPath?: string; persistTo?: string },
  seeds: SeedFile[] = [],
): Promise<string[]> {
  await applyMigrations(where);
  const printed: string[] = [];
  for (const seed of seeds) printed.push(await executeLocalSql(where, seed));
  return printed;
}

/**
 * Writes `config` as `directory`/wrangler.toml, bundles its Worker as the sources are now (`wrangler deploy
 * --dry-run`) and points the written configuration at the bundle. wrangler dev rebuilds and reloads the Worker on
 * every change to its sources, which drops the queue's in-memory messages and the requests under way: a run on a
 * snapshot is not upset by someone editing src/ meanwhile, and measures one version of the code from start to end.
 * Start it with `noBundle`.
 */
export async function snapshotBundle(directory: string, config: string) {
  mkdirSync(directory, { recursive: true });
  const configPath = join(directory, "wrangler.toml");
  writeFileSync(configPath, config);
  const outdir = join(directory, "bundle");
  await runWranglerCaptured(["deploy", "--dry-run", "--outdir", outdir, "-c", configPath]);
  const main = /^main = "([^"]*)"$/m.exec(config)?.[1];
  const bundle = main && join(outdir, basename(main).replace(/\.[cm]?[jt]sx?$/, ".js"));
  if (!bundle || !existsSync(bundle)) {
    throw new Error(`wrangler deploy --dry-run left no bundle of ${main} in ${outdir}`);
  }
  writeFileSync(configPath, config.replace(/^main = .*$/m, `main = ${JSON.stringify(bundle)}`));
  return { configPath, bundle };
}

/** Linux's clock ticks a second, the unit of /proc/<pid>/stat's CPU times (`getconf CLK_TCK`). */
const CLOCK_TICKS = 100;

/**
 * The CPU time (user and system, in seconds) spent so far by the process `root` and every process under it: for a
 * `wrangler dev`, wrangler itself and its two workerd processes (the proxy in front and the one that runs the
 * Worker, its D1, Durable Objects and queues). Null where there is no /proc (not Linux).
 */
function treeCpuSeconds(root: number): number | null {
  if (!existsSync("/proc/self/stat")) return null;
  const processes = processTable();
  let ticks = 0;
  for (const pid of [root, ...descendantsOf(root, processes)]) ticks += processes.get(pid)?.ticks ?? 0;
  return ticks / CLOCK_TICKS;
}

/** Every process of /proc: its parent and the CPU ticks it spent. Empty where there is no /proc (not Linux). */
function processTable(): Map<number, { parent: number; ticks: number }> {
  const processes = new Map<number, { parent: number; ticks: number }>();
  if (!existsSync("/proc/self/stat")) return processes;
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
  return processes;
}

/** The ids of the processes under `root` (its children, theirs, and so on), parents before their children. */
export function descendantsOf(root: number, processes = processTable()): number[] {
  const found: number[] = [];
  const pending = [root];
  for (let pid = pending.shift(); pid !== undefined; pid = pending.shift()) {
    for (const [child, { parent }] of processes) {
      if (parent === pid) {
        found.push(child);
        pending.push(child);
      }
    }
  }
  return found;
}

/**
 * Stops the processes this one started that are still running (a `wrangler d1` command under way when a run is
 * stopped, and the workerd it started), so that none of them writes into a folder the cleanup then removes: SIGTERM,
 * then SIGKILL to those left after `graceMs`. Only this process's own descendants, by their ids.
 */
export async function stopChildProcesses(graceMs = STOP_GRACE_MS): Promise<void> {
  const signal = (pids: number[], name: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, name);
      } catch {
        // Already gone.
      }
    }
  };
  const running = () => descendantsOf(process.pid);
  signal(running(), "SIGTERM");
  for (let waited = 0; running().length > 0 && waited < graceMs; waited += 100) await sleep(100);
  signal(running(), "SIGKILL");
}

export type LocalWorkerOptions = {
  port: number;
  /** The wrangler.toml to run: the project's unless given (a copy from {@link snapshotBundle}, say). */
  configPath?: string;
  /** The local state folder: `.wrangler/state` (or `SECRETARY_PERSIST_TO`) unless given. */
  persistTo?: string;
  /** Variables over `[vars]` and the `.dev.vars` next to the configuration, given with `--var`. */
  vars?: Record<string, string>;
  /** The devtools port: a free one unless given (each wrangler dev wants its own; the default 9229 is shared). */
  inspectorPort?: number;
  /** Run the configuration's `main` as it is (a bundle from {@link snapshotBundle}), with less logging. */
  noBundle?: boolean;
  /** More arguments for `wrangler dev` (`--test-scheduled`). */
  args?: string[];
  /**
   * "inherit": wrangler dev in the foreground of this terminal (its hotkeys work), not awaited; else its output is
   * kept (`output()`, and `logFile` when given, written on stop) and the start waits until `readyPath` answers 2xx.
   */
  stdio?: "inherit" | "capture";
  readyPath?: string;
  logFile?: string;
  /** Learns how to stop the Worker as soon as it is spawned, so that a signal during the wait stops it too. */
  cleanup?: Cleanup;
};

export type LocalWorker = {
  baseUrl: string;
  child: ChildProcess;
  /** Ends with wrangler's exit code (128 + the signal's number when a signal ended it). */
  exited: Promise<number>;
  /** Stops wrangler and the workerd it started: SIGTERM, then SIGKILL to them all after 5 s. */
  stop: (signal?: NodeJS.Signals) => Promise<void>;
  output: () => string;
  cpuSeconds: () => number | null;
};

/** Starts `wrangler dev` of the project (or of `configPath`) on 127.0.0.1:`port`, offline; see {@link LocalWorkerOptions}. */
export async function startLocalWorker(options: LocalWorkerOptions): Promise<LocalWorker> {
  const { port, stdio = "capture", readyPath = "/api/v1/openapi.json" } = options;
  const inspectorPort = options.inspectorPort ?? (await freePort());
  const args = [
    ...["dev", ...whereArgs(options), "--port", String(port), "--ip", "127.0.0.1"],
    ...["--inspector-port", String(inspectorPort)],
    ...Object.entries(options.vars ?? {}).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
    ...(options.noBundle ? ["--no-bundle", "--log-level", "warn"] : []),
    ...(options.args ?? []),
  ];
  const foreground = stdio === "inherit";
  // In the background, wrangler leads a process group of its own, so that a stop reaches its workerd even when
  // wrangler hangs; in the foreground it stays in the terminal's group, where its hotkeys read the keyboard.
  const child = spawn(WRANGLER_BIN, args, {
    cwd: PROJECT_ROOT,
    env: offlineEnv(),
    stdio: foreground ? "inherit" : ["ignore", "pipe", "pipe"],
    detached: !foreground,
  });
  const chunks: Buffer[] = [];
  child.stdout?.on("data", (chunk: Buffer) => chunks.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => chunks.push(chunk));
  const output = () => Buffer.concat(chunks).toString("utf8");
  const exited = new Promise<number>((resolve) => {
    child.on("error", (error) => {
      log(`Could not start wrangler: ${error.message}`);
      resolve(1);
    });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1)));
  });
  const running = () => child.exitCode === null && child.signalCode === null;
  const kill = (signal: NodeJS.Signals) => {
    if (!child.pid) return;
    try {
      if (foreground) child.kill(signal);
      else process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    if (running()) {
      kill(signal);
      const force = setTimeout(() => kill("SIGKILL"), STOP_GRACE_MS);
      await exited;
      clearTimeout(force);
    }
    // workerd may outlive wrangler for a moment: the group is told once more (nothing happens when it is empty).
    if (!foreground) kill("SIGKILL");
    if (options.logFile) writeFileSync(options.logFile, output());
  };
  options.cleanup?.add(() => stop());
  const worker: LocalWorker = {
    baseUrl: `http://127.0.0.1:${port}`,
    child,
    exited,
    stop,
    output,
    cpuSeconds: () => (child.pid ? treeCpuSeconds(child.pid) : null),
  };
  if (foreground) return worker;

  const tail = () => output().trim().split("\n").slice(-15).join("\n");
  for (let waited = 0; ; waited += 250) {
    if (!running()) {
      await stop();
      throw new Error(`wrangler dev (${options.configPath ?? "wrangler.toml"}) exited early:\n${tail()}`);
    }
    try {
      if ((await fetch(`${worker.baseUrl}${readyPath}`)).ok) break;
    } catch {
      // Not listening yet.
    }
    if (waited > READY_TIMEOUT_MS) {
      await stop();
      throw new Error(`wrangler dev did not answer within ${READY_TIMEOUT_MS / 1000} s:\n${tail()}`);
    }
    await sleep(250);
  }
  return worker;
}
