// `npm run check:structure` (part of `npm test`): the shape docs/architecture.md (Layout) promises, checked. Every
// module under src/ holds one job in at most 250 lines; no import cycle, type-only imports included (a cycle makes
// the order of module evaluation, and so what a reader can rely on, depend on who imports first); nothing is loose at
// src/domain's root (each rule lives in its feature's folder); src/schemas imports nothing from src/domain (what both
// need is in the leaf src/names-and-limits.ts, so imports point one way); the directory's tables are named only by
// the directory's module. Prints each problem and exits 1, else one line.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const MAX_LINES = 250;

function modulesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return modulesUnder(path);
    // Generated declarations (the SDK's types from openapi.json) are nobody's module to split.
    return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** The relative imports of a module (value and type-only, `export … from` included), resolved to files. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found: string[] = [];
  for (const match of text.matchAll(/(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/g)) {
    const target = resolve(dirname(file), match[1] ?? "");
    const candidates = [`${target}.ts`, `${target}.tsx`, join(target, "index.ts"), target];
    const hit = candidates.find((path) => existsSync(path) && statSync(path).isFile());
    if (hit) found.push(hit);
  }
  return found;
}

/** Strongly connected components of more than one module (Tarjan): each is an import cycle. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const stack: string[] = [];
  const onStack = new Set<string>();
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const cycles: string[][] = [];
  const visit = (module: string) => {
    index.set(module, next);
    low.set(module, next);
    next++;
    stack.push(module);
    onStack.add(module);
    for (const imported of graph.get(module) ?? []) {
      if (!index.has(imported)) {
        visit(imported);
        low.set(module, Math.min(low.get(module) ?? 0, low.get(imported) ?? 0));
      } else if (onStack.has(imported)) {
        low.set(module, Math.min(low.get(module) ?? 0, index.get(imported) ?? 0));
      }
    }
    if (low.get(module) !== index.get(module)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop() ?? module;
      onStack.delete(member);
      component.push(member);
    } while (member !== module);
    if (component.length > 1) cycles.push(component);
  };
  for (const module of graph.keys()) if (!index.has(module)) visit(module);
  return cycles;
}

// The service, and what partners run from the repository: the SDK and the CLI.
const modules = ["src", "sdk", "cli"].flatMap((dir) => modulesUnder(join(ROOT, dir)));
const problems: string[] = [];
for (const module of modules) {
  const lines = readFileSync(module, "utf8").split("\n").length - 1;
  if (lines > MAX_LINES)
    problems.push(`${relative(ROOT, module)}: ${lines} lines, above ${MAX_LINES}: split it by job`);
  if (dirname(module) === join(ROOT, "src", "domain")) {
    problems.push(`${relative(ROOT, module)}: loose at src/domain's root: move it into its feature's folder`);
  }
}
const graph = new Map(modules.map((module) => [module, importsOf(module)]));
const schemas = join(ROOT, "src", "schemas");
const domain = join(ROOT, "src", "domain");
for (const [module, imported] of graph) {
  if (!module.startsWith(schemas)) continue;
  for (const target of imported.filter((path) => path.startsWith(domain))) {
    problems.push(
      `${relative(ROOT, module)} imports ${relative(ROOT, target)}: schemas import nothing from the domain`,
    );
  }
}
// The directory's tables (the global database's: docs/scaling.md, Regional shards) are read and written by the
// directory's module alone, which takes the global database's type: no other module can query them on a shard.
const DIRECTORY_TABLES = /\b(businessShards|ownerEmails)\b/;
const directoryModules = [join(ROOT, "src", "domain", "access", "directory.ts"), join(ROOT, "src", "db", "schema")];
for (const module of modules) {
  if (directoryModules.some((allowed) => module.startsWith(allowed))) continue;
  const table = DIRECTORY_TABLES.exec(readFileSync(module, "utf8"))?.[1];
  if (table)
    problems.push(
      `${relative(ROOT, module)} names ${table}: the directory's tables belong to src/domain/access/directory.ts`,
    );
}
for (const cycle of cyclesOf(graph)) {
  problems.push(`import cycle: ${cycle.map((module) => relative(ROOT, module)).join(" → ")}`);
}
for (const problem of problems) console.log(problem);
if (problems.length > 0) process.exitCode = 1;
else
  console.log(
    `structure: ${modules.length} modules, none above ${MAX_LINES} lines, no import cycle, schemas apart, the directory's tables in its module`,
  );
