// Helpers shared by `npm run seed` and `npm start`: run the pinned wrangler fully offline (TOOLCHAIN.md, "wrangler
// dev, offline") and keep the local-only `.dev.vars` (git-ignored) in place.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The project root: wrangler runs there, so that it finds wrangler.toml and keeps its state in `.wrangler/`. */
export const PROJECT_ROOT = fileURLToPath(new URL("..", import.meta.url));

/** The pinned wrangler itself, never `npx` (killing the PID of `npx wrangler dev` would leave workerd running). */
export const WRANGLER_BIN = join(PROJECT_ROOT, "node_modules", ".bin", "wrangler");

export const DEV_VARS_PATH = join(PROJECT_ROOT, ".dev.vars");

/** With these, wrangler makes no connection beyond loopback. */
export const OFFLINE_ENV = Object.freeze({
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
});

/**
 * Where the local state (D1, Durable Objects) lives: `.wrangler/state` unless `SECRETARY_PERSIST_TO` names another
 * folder, as the browser tests do so that each run starts from an empty database.
 * @returns {string[]}
 */
export function persistArgs() {
  const folder = process.env.SECRETARY_PERSIST_TO;
  return folder ? ["--persist-to", folder] : [];
}

/** @returns {NodeJS.ProcessEnv} */
export function offlineEnv() {
  return { ...process.env, ...OFFLINE_ENV };
}

/** @typedef {{ code: number, stdout: string, stderr: string }} WranglerOutput */

export class WranglerError extends Error {
  /**
   * @param {string[]} args
   * @param {WranglerOutput} output
   */
  constructor(args, output) {
    const detail = [output.stderr.trim(), output.stdout.trim()].filter(Boolean).join("\n");
    super(`wrangler ${args.join(" ")} failed with exit code ${output.code}${detail ? `:\n${detail}` : "."}`);
    this.name = "WranglerError";
    this.output = output;
  }
}

/**
 * Runs wrangler non-interactively (stdin closed, output piped: wrangler then confirms its own prompts) and returns
 * what it printed. Rejects with a {@link WranglerError} carrying the output when it exits with a non-zero code.
 * @param {string[]} args
 * @returns {Promise<WranglerOutput>}
 */
export function runWranglerCaptured(args) {
  return new Promise((resolve, reject) => {
    const child = spawn(WRANGLER_BIN, args, {
      cwd: PROJECT_ROOT,
      env: offlineEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    /** @type {Buffer[]} */
    const stdout = [];
    /** @type {Buffer[]} */
    const stderr = [];
    child.stdout.on("data", (chunk) => stdout.push(chunk));
    child.stderr.on("data", (chunk) => stderr.push(chunk));
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const output = {
        code: code ?? 1,
        stdout: Buffer.concat(stdout).toString("utf8"),
        stderr: Buffer.concat(stderr).toString("utf8") + (signal ? `\n(wrangler was stopped by ${signal})` : ""),
      };
      if (output.code === 0 && !signal) resolve(output);
      else reject(new WranglerError(args, output));
    });
  });
}

/**
 * Starts wrangler with the terminal as its stdio (for `wrangler dev`). The caller owns the child: stopping its PID
 * stops wrangler and the workerd it started.
 * @param {string[]} args
 */
export function spawnWranglerInherited(args) {
  return spawn(WRANGLER_BIN, args, { cwd: PROJECT_ROOT, env: offlineEnv(), stdio: "inherit" });
}

/**
 * Parses the dotenv-style `.dev.vars`: `KEY=value` lines, `#` comments, optional `export ` and quotes.
 * @param {string} text
 * @returns {Record<string, string>}
 */
export function parseDevVars(text) {
  /** @type {Record<string, string>} */
  const vars = {};
  for (const rawLine of text.split(/\r?\n/)) {
    const line = rawLine.trim();
    if (!line || line.startsWith("#")) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!match) continue;
    const key = match[1] ?? "";
    const rawValue = match[2] ?? "";
    const quoted = /^(["'])(.*)\1\s*(?:#.*)?$/.exec(rawValue);
    let value = quoted ? (quoted[2] ?? "") : rawValue.replace(/\s+#.*$/, "");
    if (quoted?.[1] === '"') value = value.replaceAll("\\n", "\n");
    vars[key] = value;
  }
  return vars;
}

/** 32 random bytes in base64url without padding (43 characters). */
export function randomRuntimeToken() {
  return randomBytes(32).toString("base64url");
}

/** The local defaults; RUNTIME_TOKEN is random per clone. */
function defaultDevVars() {
  return {
    BASE_URL: "http://localhost:8787",
    ALLOW_LOOPBACK_URLS: "true",
    RUNTIME_TOKEN: randomRuntimeToken(),
  };
}

/**
 * Makes sure `.dev.vars` exists and returns its values. A missing file is created with the local defaults; an
 * existing one is kept as it is, except that BASE_URL and RUNTIME_TOKEN are appended when it lacks them (the seed
 * prints both).
 * @param {{ log?: (message: string) => void }} [options]
 * @returns {Record<string, string>}
 */
export function ensureDevVars(options = {}) {
  const log = options.log ?? ((message) => process.stderr.write(`${message}\n`));
  if (!existsSync(DEV_VARS_PATH)) {
    const vars = defaultDevVars();
    const lines = [
      "# Local development only (git-ignored); written by scripts/wrangler.mjs. Overrides [vars] of wrangler.toml.",
      ...Object.entries(vars).map(([key, value]) => `${key}=${value}`),
    ];
    writeFileSync(DEV_VARS_PATH, `${lines.join("\n")}\n`, { mode: 0o600 });
    log("Created .dev.vars (BASE_URL, ALLOW_LOOPBACK_URLS, a random RUNTIME_TOKEN).");
    return readDevVars();
  }
  const text = readFileSync(DEV_VARS_PATH, "utf8");
  const vars = parseDevVars(text);
  /** @type {string[]} */
  const missing = [];
  if (!vars.BASE_URL) missing.push(`BASE_URL=${defaultDevVars().BASE_URL}`);
  if (!vars.RUNTIME_TOKEN) missing.push(`RUNTIME_TOKEN=${randomRuntimeToken()}`);
  if (missing.length > 0) {
    const separator = text === "" || text.endsWith("\n") ? "" : "\n";
    writeFileSync(DEV_VARS_PATH, `${text}${separator}${missing.join("\n")}\n`);
    log(`Added ${missing.map((line) => line.slice(0, line.indexOf("="))).join(" and ")} to .dev.vars.`);
  }
  return readDevVars();
}

/** @returns {Record<string, string>} */
export function readDevVars() {
  return parseDevVars(readFileSync(DEV_VARS_PATH, "utf8"));
}
