import { spawn } from "node:child_process";
import { once } from "node:events";
import { cpSync, mkdirSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, inject } from "vitest";
import { startLocalWorker } from "../scripts/local-worker.ts";
import { type BusinessToSeed, type SeedResult, seed as seedBusiness, seedBusinesses } from "../scripts/seed.ts";
import { LOCAL_ONLY_VARS } from "../scripts/wrangler.ts";
import { type ReceivedRequest, startReceiver as startTestReceiver } from "../test/receiver.ts";

/**
 * Each browser test file runs on a local state of its own: a copy of the run's migrated state (test-e2e/global-setup.ts),
 * with no business yet, beside it in the run's folder. The seed and `wrangler dev` both use it, and the developer's
 * `.wrangler/state` is never touched (a run leaves keys and intakes behind, and the limits of 10 keys and 5 intakes
 * would fail the fifth run). Vitest isolates each file, so this module, and the copy, is made once per file.
 */
const STATE = mkdtempSync(join(dirname(inject("migratedState")), "state-"));
cpSync(inject("migratedState"), STATE, { recursive: true });

/**
 * The port of each file's `wrangler dev`, its devtools 100 above: one each, as the files run side by side
 * (vitest.e2e.config.ts), and none of `npm start`'s 8787, the upgrade check's 8780–8789, the bench's 8794–8795 or the
 * soak's 8797, so that the browser tests can run beside any of them.
 */
export const PORTS = {
  accessibility: 8801,
  "api-reference": 8802,
  cli: 8803,
  dashboard: 8804,
  "dashboard-actions": 8805,
  "dashboard-intakes": 8806,
  "dashboard-mcp": 8810,
  "dashboard-webhooks": 8807,
  guides: 8808,
  packages: 8809,
} as const;
const INSPECTOR_OFFSET = 100;

type Port = (typeof PORTS)[keyof typeof PORTS];

/** Fails when something listens on `port` already: another run of these tests, whose worker does not know our seed. */
async function ensureFree(port: number) {
  const server = createServer();
  const listening = await new Promise<boolean>((resolve) => {
    server.once("error", () => resolve(false)).listen(port, "127.0.0.1", () => resolve(true));
  });
  if (!listening) throw new Error(`port ${port} is in use: is another run of the browser tests going on?`);
  await new Promise((resolve) => server.close(resolve));
}

export type Seeded = SeedResult;

/** What `npm run seed --silent` does (scripts/seed.ts) on the migrated state: the demo business and a fresh API key. */
export function seed(): Promise<Seeded> {
  return seedBusiness({ persistTo: STATE, log: () => {}, migrated: true });
}

/** More businesses, each in the shard of its country (scripts/seed.ts), seeded as `seed` seeds the demo one. */
export function seedMore(toSeed: BusinessToSeed[]): Promise<Seeded[]> {
  return seedBusinesses(toSeed, { persistTo: STATE, log: () => {}, migrated: true });
}

/**
 * A real `wrangler dev` on `port` of {@link PORTS} (scripts/local-worker.ts) of the run's bundle of the project
 * (test-e2e/global-setup.ts), answering once its routes are up; the returned function stops it with the workerd it
 * started and leaves its output in test-artifacts.
 */
export async function startWorker(port: Port): Promise<() => Promise<void>> {
  const inspectorPort = port + INSPECTOR_OFFSET;
  await ensureFree(port);
  await ensureFree(inspectorPort);
  const logFile = `test-artifacts/wrangler-dev-${port}.log`;
  mkdirSync(dirname(logFile), { recursive: true });
  const worker = await startLocalWorker({
    port,
    inspectorPort,
    configPath: inject("workerConfig"),
    noBundle: true,
    persistTo: STATE,
    logFile,
    vars: { BASE_URL: `http://localhost:${port}`, ...LOCAL_ONLY_VARS },
  });
  return () => worker.stop();
}

/**
 * The project's receiver (test/receiver.ts) for webhook deliveries, action calls and OAuth redirects, answering
 * what the connected action of {@link sampleAction} answers, with every request kept in `requests` (`url` is the
 * path and query).
 */
export async function startReceiver() {
  const requests: Array<ReceivedRequest & { url: string }> = [];
  const receiver = await startTestReceiver({
    answer: { in_stock: true, items: 3 },
    onRequest: (request) => requests.push({ ...request, url: request.path }),
  });
  return { url: receiver.url, requests, stop: receiver.close };
}

/**
 * Debian's Chromium (docs/toolchain.md, Debian packages), headless, with the background networking that a closed network
 * would refuse switched off.
 */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Where the browser tests leave their screenshots. */
export const SHOTS = "test-artifacts/screenshots";

/** The two sizes every page is tried at: a phone's and a desktop's. */
export const VIEWPORTS = [
  { name: "phone", width: 390, height: 844 },
  { name: "desktop", width: 1280, height: 800 },
] as const;

/** The axe-core impacts that fail a browser test (docs/architecture.md, Pages). */
export const FAILING_IMPACTS = new Set(["serious", "critical"]);

/**
 * A file's `wrangler dev` on `port` and its Chromium, started before its tests and stopped after them, for the files
 * that need nothing else (no seed, no receiver): `browser()` is the running browser.
 */
export function workerAndBrowser(port: Port): { browser: () => Browser } {
  let browser: Browser | undefined;
  let stopWorker: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    stopWorker = await startWorker(port);
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stopWorker?.();
  });
  return {
    browser: () => {
      if (!browser) throw new Error("the browser has not started");
      return browser;
    },
  };
}

/** A short random suffix for names that must be unique in a file's local state. */
export const unique = () => Math.random().toString(36).slice(2, 8);

/**
 * A process of the test's (the CLI, npm, a partner's program), its output kept as it comes; `exited` answers its exit
 * code, null when a signal ended it. `detached` puts it in a process group of its own, so that a signal can reach
 * the whole group, as ^C in a terminal reaches npx and the command under it.
 */
export function spawned(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; detached?: boolean } = {},
) {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
    detached: options.detached,
  });
  const output = { stdout: "", stderr: "" };
  child.stdout.on("data", (chunk: Buffer) => {
    output.stdout += chunk.toString();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output.stderr += chunk.toString();
  });
  const exited = once(child, "exit").then(([code]) => code as number | null);
  return { child, output, exited };
}

/** Polls `check` until it holds: work the Worker finishes after its answer (a delivery, an action call). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

/** The connected action the browser tests register: the e2e receiver answers its calls. */
export const sampleAction = (receiverUrl: string) => ({
  name: `stock_${unique()}`,
  title: "Check stock",
  description: "Tells whether a hair product is in stock in the salon today.",
  url: `${receiverUrl}/stock`,
  parameters: {
    type: "object",
    properties: { sku: { type: "string", description: "Product code" } },
    required: ["sku"],
  },
});

/** The intake the browser tests register: a name, an email (contact details) and a choice. */
export const sampleIntake = () => ({
  name: `quote_${unique()}`,
  title: "Colour consultation",
  description: "When a customer asks about hair colour advice before booking. Not for haircuts.",
  fields: [
    { id: "full_name", label: "What is your full name?", type: "text", required: true },
    { id: "email", label: "Which email should we use?", type: "email", required: true },
    { id: "hair", label: "Your hair type?", type: "select", options: ["Fine", "Thick"] },
  ],
});

/** A partner API call to the local Worker at `base` with `credential` as the bearer; a body goes as JSON. */
export const callApi = (
  base: string,
  credential: string,
  path: string,
  init: { method?: string; body?: unknown } = {},
) =>
  fetch(`${base}${path}`, {
    method: init.method ?? "GET",
    headers: {
      Authorization: `Bearer ${credential}`,
      ...(init.body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
