import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { chromium } from "playwright-core";

const run = promisify(execFile);
/**
 * Each browser test file runs on a local state of its own, empty at the start: the seed and `wrangler dev` both use
 * it, and the developer's `.wrangler/state` is never touched (a run leaves keys and intakes behind, and the limits
 * of 10 keys and 5 intakes would fail the fifth run).
 */
const STATE = mkdtempSync(join(tmpdir(), "secretary-e2e-"));
const OFFLINE = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
  SECRETARY_PERSIST_TO: STATE,
};

export type Seeded = {
  base_url: string;
  business_id: string;
  api_key: string;
  owner_email: string;
  owner_password: string;
  runtime_token: string;
};

/** `npm run seed --silent`: the local migrations, the demo business and a fresh API key (scripts/seed.mjs). */
export async function seed(): Promise<Seeded> {
  const { stdout } = await run("node", ["scripts/seed.mjs"], { env: { ...process.env, ...OFFLINE } });
  return JSON.parse(stdout) as Seeded;
}

/** A real `wrangler dev` of the project on `port`, stopped by the returned function (with the workerd it started). */
export async function startWorker(port: number): Promise<() => Promise<void>> {
  const child: ChildProcess = spawn(
    "node_modules/.bin/wrangler",
    [
      "dev",
      "--port",
      String(port),
      "--ip",
      "127.0.0.1",
      "--persist-to",
      STATE,
      "--var",
      `BASE_URL:http://localhost:${port}`,
      // Each file's own debugger port: wrangler's default (9229) is shared, and a second run on the machine failed.
      "--inspector-port",
      String(port + 1000),
    ],
    { env: { ...process.env, ...OFFLINE }, stdio: ["ignore", "pipe", "pipe"], detached: true },
  );
  let output = "";
  child.stdout?.on("data", (chunk) => {
    output += chunk;
  });
  child.stderr?.on("data", (chunk) => {
    output += chunk;
  });
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/openapi.json`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`wrangler dev did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return async () => {
    if (child.pid) process.kill(-child.pid, "SIGTERM");
    await new Promise((resolve) => setTimeout(resolve, 500));
  };
}

/** A local HTTP receiver for webhook deliveries, action calls and OAuth redirects: records every request. */
export async function startReceiver() {
  const requests: Array<{ method: string; url: string; headers: Record<string, unknown>; body: string }> = [];
  const server: Server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      requests.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ in_stock: true, items: 3 }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, requests, stop: () => new Promise((resolve) => server.close(resolve)) };
}

/**
 * Debian's Chromium (TOOLCHAIN.md, Browser tests), headless, with the background networking that a closed network
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

/** A short random suffix for names that must be unique in a file's local state. */
export const unique = () => Math.random().toString(36).slice(2, 8);

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
