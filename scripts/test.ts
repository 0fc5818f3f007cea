// `npm test` after the Node version check: the static checks run side by side with `vitest run`, since the machine's
// cores would otherwise idle while tsc (one thread) or the test runtimes wait. Each check's output is kept and printed
// only when it fails, so a passing run prints the tests' report and one line for the checks. The checks are the npm
// scripts of the same names, run as npm would (node_modules/.bin first on the PATH), so package.json stays the one
// place that says what each does.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { delimiter, join } from "node:path";

const CHECKS = [
  "typecheck",
  "lint",
  "lint:openapi",
  "check:references",
  "check:structure",
  "size",
  "deploy:check:shape",
];

const root = join(import.meta.dirname, "..");
const scripts: Record<string, string> = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).scripts;
const env = { ...process.env, PATH: `${join(root, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}` };

type Outcome = { name: string; code: number; output: string; seconds: number };

function check(name: string): Promise<Outcome> {
  const command = scripts[name];
  if (!command) throw new Error(`package.json has no script "${name}"`);
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, { cwd: root, env, shell: true, stdio: ["ignore", "pipe", "pipe"] });
    const chunks: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk));
    child.on("close", (code) =>
      resolve({
        name,
        code: code ?? 1,
        output: Buffer.concat(chunks).toString("utf8"),
        seconds: (performance.now() - started) / 1000,
      }),
    );
  });
}

function vitest(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(join(root, "node_modules", ".bin", "vitest"), ["run"], { cwd: root, env, stdio: "inherit" });
    child.on("close", (code) => resolve(code ?? 1));
  });
}

const [outcomes, testsCode] = await Promise.all([Promise.all(CHECKS.map(check)), vitest()]);
const failed = outcomes.filter((outcome) => outcome.code !== 0);
for (const outcome of failed) console.error(`\n✗ npm run ${outcome.name} failed:\n${outcome.output.trimEnd()}`);
const slowest = Math.max(...outcomes.map((outcome) => outcome.seconds));
if (failed.length === 0) console.log(`Checks passed (${CHECKS.join(", ")}) in ${slowest.toFixed(1)} s.`);
process.exitCode = failed.length > 0 || testsCode !== 0 ? 1 : 0;
