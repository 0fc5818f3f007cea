// The pinned wrangler, run fully offline (no connection beyond loopback): its binary, its environment, a captured
// run, and the local-only `.dev.vars` (git-ignored) that `npm start` and the seed keep in place. Every script that
// runs wrangler goes through here; a `wrangler dev` is started by scripts/local-worker.ts.
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

export function offlineEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ...OFFLINE_ENV };
}

/**
 * `-c <config>` and `--persist-to <folder>` for a wrangler command: the project's wrangler.toml and `.wrangler/state`
 * unless given. `SECRETARY_PERSIST_TO` names another state folder for `npm start` and `npm run seed`.
 */
export function whereArgs(where: { configPath?: string; persistTo?: string } = {}): string[] {
  const persistTo = where.persistTo ?? process.env.SECRETARY_PERSIST_TO;
  return [...(where.configPath ? ["-c", where.configPath] : []), ...(persistTo ? ["--persist-to", persistTo] : [])];
}

export type WranglerOutput = { code: number; stdout: string; stderr: string };

export class WranglerError extends Error {
  output: WranglerOutput;
  constructor(args: string[], output: WranglerOutput) {
    const detail = [output.stderr.trim(), output.stdout.trim()].filter(Boolean).join("\n");
    super(`wrangler ${args.join(" ")} failed with exit code ${output.code}${detail ? `:\n${detail}` : "."}`);
    this.name = "WranglerError";
    this.output = output;
  }
}

/**
 * Runs wrangler non-interactively (stdin closed, output piped: wrangler then confirms its own prompts) and returns
 * what it printed. Rejects with a {@link WranglerError} carrying the output when it exits with a non-zero code.
 */
export function runWranglerCaptured(args: string[]): Promise<WranglerOutput> {
  return new Promise((resolve, reject) => {
    const child = spawn(WRANGLER_BIN, args, {
      cwd: PROJECT_ROOT,
      env: offlineEnv(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
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

/** Parses the dotenv-style `.dev.vars`: `KEY=value` lines, `#` comments, optional `export ` and quotes. */
export function parseDevVars(text: string): Record<string, string> {
  const vars: Record<string, string> = {};
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

/** 32 random bytes in base64url without padding (43 characters): a local RUNTIME_TOKEN or OPERATOR_TOKEN. */
export function randomToken(): string {
  return randomBytes(32).toString("base64url");
}

/**
 * What local development and its tools run with, and production never does: loopback URLs for webhooks and actions,
 * and Durable Object jurisdictions emulated, as workerd does not implement them (src/durable-objects/jurisdictions.ts).
 */
export const LOCAL_ONLY_VARS = { ALLOW_LOOPBACK_URLS: "true", LOCAL_DURABLE_OBJECT_JURISDICTIONS: "emulated" };

/**
 * The local defaults; RUNTIME_TOKEN and OPERATOR_TOKEN are random per clone. Durable Object jurisdictions are emulated, as workerd does not
 * implement them (src/durable-objects/jurisdictions.ts).
 */
function defaultDevVars() {
  return {
    BASE_URL: "http://localhost:8787",
    ...LOCAL_ONLY_VARS,
    RUNTIME_TOKEN: randomToken(),
    OPERATOR_TOKEN: randomToken(),
  };
}

/**
 * Makes sure `.dev.vars` exists and returns its values. A missing file is created with the local defaults; an
 * existing one is kept as it is, except that BASE_URL, RUNTIME_TOKEN and OPERATOR_TOKEN are appended when it lacks
 * them (the seed prints the first two; `npm run move-business` reads the third).
 */
export function ensureDevVars(options: { log?: (message: string) => void } = {}): Record<string, string> {
  const log = options.log ?? ((message: string) => process.stderr.write(`${message}\n`));
  if (!existsSync(DEV_VARS_PATH)) {
    const lines = [
      "# Local development only (git-ignored); written by scripts/wrangler.ts. Overrides [vars] of wrangler.toml.",
      ...Object.entries(defaultDevVars()).map(([key, value]) => `${key}=${value}`),
    ];
    writeFileSync(DEV_VARS_PATH, `${lines.join("\n")}\n`, { mode: 0o600 });
    log(
      "Created .dev.vars (BASE_URL, ALLOW_LOOPBACK_URLS, LOCAL_DURABLE_OBJECT_JURISDICTIONS, a random RUNTIME_TOKEN and OPERATOR_TOKEN).",
    );
    return readDevVars();
  }
  const text = readFileSync(DEV_VARS_PATH, "utf8");
  const vars = parseDevVars(text);
  const missing: string[] = [];
  if (!vars.BASE_URL) missing.push(`BASE_URL=${defaultDevVars().BASE_URL}`);
  if (!vars.RUNTIME_TOKEN) missing.push(`RUNTIME_TOKEN=${randomToken()}`);
  if (!vars.OPERATOR_TOKEN) missing.push(`OPERATOR_TOKEN=${randomToken()}`);
  if (!vars.LOCAL_DURABLE_OBJECT_JURISDICTIONS) {
    missing.push(`LOCAL_DURABLE_OBJECT_JURISDICTIONS=${LOCAL_ONLY_VARS.LOCAL_DURABLE_OBJECT_JURISDICTIONS}`);
  }
  if (missing.length > 0) {
    const separator = text === "" || text.endsWith("\n") ? "" : "\n";
    writeFileSync(DEV_VARS_PATH, `${text}${separator}${missing.join("\n")}\n`);
    log(`Added ${missing.map((line) => line.slice(0, line.indexOf("="))).join(" and ")} to .dev.vars.`);
  }
  return readDevVars();
}

export function readDevVars(): Record<string, string> {
  return parseDevVars(readFileSync(DEV_VARS_PATH, "utf8"));
}
