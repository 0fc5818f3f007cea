#!/usr/bin/env node
// The repository explains itself: every path a comment or a document names exists, every section a comment or a
// document cites ("docs/architecture.md, The outbox") is a heading of that document, and nothing points outside the
// repository (a design file a clone does not have, the partner contract by a name of its own, an issue tracker's
// numbers). No dependencies; Node 22.18 or newer runs it as TypeScript (npm run check:references, on Node 24).
//
//   node scripts/check-references.ts              prints `path:line: message` per problem and exits 1, or a summary
//   node scripts/check-references.ts --self-test  only the checks of FIXTURES, which also run before every check
//
// What is read: src/**/*.{ts,tsx,md}, test/**/*.ts, test-e2e/**/*.ts, scripts/**/*.{ts,mjs}, sdk, cli, bench/**/*.md,
// README.md, docs/**/*.md. Paths, section citations and citations outside the repository (OUTSIDE) are looked for
// wherever they are written (a test's title too); `#N`, file names without their top folder and the contract cited
// by its short name only in comments and documents (in code, `#333` is a colour and a string may name a file).

type Problem = { file: string; line: number; message: string };

import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SELF = "scripts/check-references.ts";

/** Folders to read, and which file names in them. */
const SOURCES = [
  { dir: "src", match: /\.(?:ts|tsx|md)$/ },
  { dir: "test", match: /\.ts$/ },
  { dir: "test-e2e", match: /\.ts$/ },
  { dir: "scripts", match: /\.(?:ts|mjs)$/ },
  { dir: "sdk", match: /\.(?:ts|md)$/ },
  { dir: "cli", match: /\.ts$/ },
  { dir: "bench", match: /\.md$/ },
  { dir: "docs", match: /\.md$/ },
];
const SINGLE_FILES = ["README.md"];
const SKIP_DIRS = new Set(["node_modules", ".wrangler", "dist", ".git", "test-artifacts"]);

const ROOTS = "(?:src|docs|test|test-e2e|scripts|migrations|bench|sdk|cli)";
/** A repository path: a known top folder, then a file with one of the extensions worth naming. */
const PATH = new RegExp(`(?<![\\w@.-])${ROOTS}/[\\w./-]*?[\\w-]\\.(?:ts|tsx|mjs|md|sql|json)(?![\\w])`, "g");
/** A folder named with its trailing slash (`src/domain/access/`). */
const FOLDER = new RegExp(`(?<![\\w@.-])${ROOTS}/(?:[\\w.-]+/)*(?![\\w.-])`, "g");
/** A section citation: `docs/x.md, Section`, `docs/x.md, "Section"`, `docs/x.md (Section)`. */
const CITATION = /(?<![\w@./-])(docs\/[\w./-]+?\.md)(?:, *| *\()/g;
/** The refusal of the contract cited by its short name, which names a document a clone does not have. */
const CONTRACT_BY_NAME =
  "cites the contract's document by name, which the repository does not hold; cite the docs/ section that states the rule";
/** What points outside the repository. */
const OUTSIDE = [
  // The design brief and the folder beside the checkout that holds it: a clone of the project has neither.
  { pattern: /DESIGN\.md/g, message: "cites the design brief, which a clone does not have; cite docs/architecture.md" },
  { pattern: /\.\.\/shared(?![\w-])/g, message: "points outside the repository; cite a docs/ section" },
  { pattern: /\b[Ii]ssues? #?\d+/g, message: "names an issue number; say the rule, or cite a docs/ section" },
  // Only in comments: in code, `#333` is a colour and `&#39;` an entity.
  {
    pattern: /(?<![&\w])#\d+\b/g,
    commentsOnly: true,
    message: "names an issue number (#N); say the rule, or cite a docs/ section",
  },
  // The partner contract cited by its short name, alone or before a section (the fixtures below show each form): a
  // clone holds no such document. Not `specifier`, `inspector`, `x.spec.ts`, `spec-limits`.
  {
    pattern: /(?<!OpenAPI )(?<![\w./-])spec(?:['’]s)?(?![\w-]|\.\w)/gi,
    commentsOnly: true,
    message: CONTRACT_BY_NAME,
  },
  // …and in code, where `spec` may be a variable's name, only its citing forms (a test's title that cites a section).
  {
    pattern: /\bthe spec\b|\(spec[:;]|(?<![\w./-])spec['’]s\b/gi,
    codeOnly: true,
    message: CONTRACT_BY_NAME,
  },
  {
    pattern: /OpenAPI spec(?![\w-])/gi,
    commentsOnly: true,
    message: 'says "OpenAPI spec"; say "the OpenAPI document" (docs/openapi.md)',
  },
];
/**
 * A file named without its top folder: `lib/zod-messages.ts` (some file's path ends with it) or `business-rows.ts`
 * (some file has that name). Paths from a top folder are PATH's; a name inside a URL or a longer path is not one.
 */
const FILE_NAME =
  /(?<![\w@$./\\<>-])(?:\.\.?\/)*((?:[\w.-]+\/)*\w[\w.-]*\.(?:ts|tsx|mjs|js|md|sql|json|css|svg|toml))(?![\w/(-]|\.\w)/g;
/**
 * Names that are not files of the repository: the local secrets file, products spelt like files, build output and
 * what the tests write (test-artifacts/, git-ignored: present only after a run, so never looked for).
 */
const NOT_FILES = /^(?:\.dev\.vars|Node\.js|Next\.js|(?:dist|test-artifacts)\/.*)$/;

function filesUnder(dir: string, match: RegExp, found: string[] = []): string[] {
  const full = join(ROOT, dir);
  if (!existsSync(full)) return found;
  for (const entry of readdirSync(full, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIP_DIRS.has(entry.name)) filesUnder(path, match, found);
    } else if (match.test(entry.name)) {
      found.push(path);
    }
  }
  return found;
}

/** Every file of the repository, for FILE_NAME: its paths, its names without their folder, and its packages. */
function repositoryFiles() {
  const paths = filesUnder(".", /(?:)/).map((path) => path.slice(2));
  const { dependencies = {}, devDependencies = {} } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  const packages = Object.keys({ ...dependencies, ...devDependencies });
  return { paths, names: new Set(paths.map((path) => path.slice(path.lastIndexOf("/") + 1))), packages };
}

/** Whether a file named without its top folder is in the repository, or in a package it uses (`drizzle-orm/x.js`). */
function fileExists(name: string, files: RepositoryFiles) {
  if (!name.includes("/")) return files.names.has(name);
  if (files.packages.some((pkg: string) => name.startsWith(`${pkg}/`))) return true;
  return files.paths.some((path) => path === name || path.endsWith(`/${name}`));
}

/**
 * The comments of a TypeScript or JavaScript file, as a copy of the text in which everything else is blanked out
 * (line breaks kept, so line numbers stay). Strings, template literals and regular expression literals are skipped;
 * a `/` starts a regular expression where an expression may start (after an operator, a bracket or a keyword).
 */
function commentsOnly(text: string) {
  const out = [];
  let i = 0;
  let lastSignificant = "";
  let lastWord = "";
  const blank = (s: string) => s.replace(/[^\n]/g, " ");
  while (i < text.length) {
    const c = text[i];
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      const end = text.indexOf("\n", i);
      const stop = end === -1 ? text.length : end;
      out.push(text.slice(i, stop));
      i = stop;
      continue;
    }
    if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end === -1 ? text.length : end + 2;
      out.push(text.slice(i, stop));
      i = stop;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c) {
        if (text[j] === "\\") j++;
        else if (c !== "`" && text[j] === "\n") break;
        j++;
      }
      out.push(blank(text.slice(i, j + 1)));
      i = j + 1;
      lastSignificant = c;
      lastWord = "";
      continue;
    }
    if (c === "/") {
      const expressionStarts =
        lastSignificant === "" ||
        "(,=:[!&|?{};+-*%<>~^".includes(lastSignificant) ||
        ["return", "typeof", "case", "do", "else", "in", "of", "void", "yield", "await"].includes(lastWord);
      if (expressionStarts) {
        let j = i + 1;
        let inClass = false;
        while (j < text.length && text[j] !== "\n") {
          if (text[j] === "\\") j++;
          else if (text[j] === "[") inClass = true;
          else if (text[j] === "]") inClass = false;
          else if (text[j] === "/" && !inClass) break;
          j++;
        }
        out.push(blank(text.slice(i, j + 1)));
        i = j + 1;
        lastSignificant = "/";
        lastWord = "";
        continue;
      }
    }
    out.push(c === "\n" ? "\n" : " ");
    if (!/\s/.test(c)) {
      lastSignificant = c;
      const word = /^[A-Za-z_$][\w$]*/.exec(text.slice(i));
      if (word && !/[\w$]/.test(text[i - 1] ?? "")) {
        lastWord = word[0];
        out.push(" ".repeat(word[0].length - 1));
        i += word[0].length;
        lastSignificant = word[0].at(-1) ?? "";
        continue;
      }
      lastWord = "";
    }
    i++;
  }
  return out.join("");
}

/**
 * A document's lines as FILE_NAME reads them: code blocks and commands (`node connect.mjs`) blanked, since the files
 * they name are the reader's own.
 */
function documentProse(lines: string[]) {
  let fenced = false;
  return lines.map((line) => {
    const fence = /^\s*```/.test(line);
    if (fence) fenced = !fenced;
    return fence || fenced ? "" : line.replace(/`[^`]*`/g, (span) => (span.includes(" ") ? "" : span));
  });
}

/** Heading text, and list items' bold labels (`- **Token budget**: …`), as they are compared: lower case, bare. */
function normalise(name: string) {
  return name
    .replace(/[*_`]/g, "")
    .replace(/^\d+(?:\.\d+)*\.?\s+/, "")
    .replace(/^["'“‘*]+|["'”’*]+$/g, "")
    .replace(/[\s.,:;!?]+$/, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

const sectionCache = new Map();
function sectionsOf(path: string) {
  if (!sectionCache.has(path)) {
    const names = new Set();
    const text = readFileSync(join(ROOT, path), "utf8");
    let fenced = false;
    for (const line of text.split("\n")) {
      if (/^\s*```/.test(line)) fenced = !fenced;
      if (fenced) continue;
      const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
      if (heading) names.add(normalise(heading[1]));
      const label = /^\s*(?:[-*]\s+)?\*\*([^*]+)\*\*/.exec(line);
      if (label) names.add(normalise(label[1]));
    }
    sectionCache.set(path, names);
  }
  return sectionCache.get(path);
}

/**
 * The section name a citation gives, from the text after `docs/x.md, ` or `docs/x.md (`: up to the closing quote
 * when quoted; else up to the first `)`, or `:` `;` `.` followed by a space or the end (a heading's own numbering,
 * "5. Refresh", is kept), joined with the next line when it runs to the end of its line. Text that does not start
 * with a capital letter or a backtick is a sentence going on ("docs/webhooks.md, kept here so that…", a date), not
 * a section.
 */
function sectionName(rest: string) {
  const quoted = /^\s*["“*]([^"”*]+)["”*]/.exec(rest);
  if (quoted) return { name: quoted[1], complete: true };
  const numbering = /^\s*(?:\d+\.)+\s+/.exec(rest)?.[0] ?? "";
  const body = rest.slice(numbering.length);
  const end = /\)|[:;.](?=\s|$)/.exec(body);
  const name = (end ? body.slice(0, end.index) : body).trim();
  if (!/^[A-Z`]/.test(name)) return null;
  return { name: numbering + name, complete: Boolean(end) };
}

/** The text of the next line without its comment or list markers, to continue a citation broken over two lines. */
const continuation = (line: string | undefined) => (line ?? "").replace(/^\s*(?:\/\/+|\/?\*+\/?|#+|[-*>])?\s*/, "");

type RepositoryFiles = ReturnType<typeof repositoryFiles>;

/** Checks one file's text; answers how many references it checked. */
function check(file: string, text: string, files: RepositoryFiles, report: (line: number, message: string) => void) {
  let checked = 0;
  const isCode = /\.(?:ts|tsx|mjs)$/.test(file);
  const lines = text.split("\n");
  const commentLines = isCode ? commentsOnly(text).split("\n") : lines;
  const proseLines = isCode ? commentLines : documentProse(lines);

  lines.forEach((line, index) => {
    const at = index + 1;

    // (a) repository paths and folders
    for (const m of line.matchAll(PATH)) {
      const before = line.slice(0, m.index);
      if (/\/$/.test(before) && !/(?:^|[^\w.-])\.\.?\/$/.test(before)) continue; // inside a longer foreign path
      if (/\$\{[^}]*$/.test(before) || /^\$\{/.test(line.slice(m.index + m[0].length))) continue;
      checked++;
      const relativeToFile = /\.\.?\/$/.test(before)
        ? resolve(ROOT, dirname(file), (before.match(/(?:\.\.?\/)+$/) ?? [""])[0], m[0])
        : null;
      if (!existsSync(join(ROOT, m[0])) && !(relativeToFile && existsSync(relativeToFile))) {
        report(at, `${m[0]} does not exist`);
      }
    }
    for (const m of line.matchAll(FOLDER)) {
      const before = line.slice(0, m.index);
      if (/\/$/.test(before)) continue;
      checked++;
      const full = join(ROOT, m[0]);
      if (!existsSync(full) || !statSync(full).isDirectory()) report(at, `folder ${m[0]} does not exist`);
    }

    // (b) section citations
    for (const m of line.matchAll(CITATION)) {
      const doc = m[1];
      if (!existsSync(join(ROOT, doc))) continue; // reported by (a)
      const after = line.slice(m.index + m[0].length);
      let cited = sectionName(after);
      if (cited && !cited.complete)
        cited = sectionName(`${after.trimEnd()} ${continuation(lines[index + 1])}`) ?? cited;
      if (!cited) continue;
      checked++;
      const sections = sectionsOf(doc);
      const wanted = normalise(cited.name);
      if (sections.has(wanted)) continue;
      // A sentence may go on after the section's name without punctuation, and one citation may name several
      // sections ("docs/intakes.md (Contact details, Identity questions)").
      const startsWithSection = [...sections].some(
        (s) => wanted.startsWith(s) && /^[\s,—–-]/.test(wanted.slice(s.length)),
      );
      // …and a heading may carry a qualifier the citation leaves out ("OAuth: RFC 9700", "… (for contributors)").
      const qualified = [...sections].some((s) => s.startsWith(`${wanted}:`) || s.startsWith(`${wanted} (`));
      const everyPart =
        wanted.includes(", ") && wanted.split(", ").every((part: string) => sections.has(normalise(part)));
      if (startsWithSection || qualified || everyPart) continue;
      report(at, `${doc} has no section "${cited.name.trim()}"`);
    }

    // (c) file names without their top folder, in comments and documents
    for (const m of (proseLines[index] ?? "").matchAll(FILE_NAME)) {
      const name = m[1] ?? "";
      if (new RegExp(`^${ROOTS}/`).test(name) || NOT_FILES.test(name)) continue;
      checked++;
      if (!fileExists(name, files)) report(at, `${name} names no file of the repository`);
    }

    // (d) nothing outside the repository
    for (const { pattern, message, commentsOnly: inComments, codeOnly } of OUTSIDE) {
      const comments = commentLines[index] ?? "";
      const code = isCode ? [...line].map((c, i) => (comments[i] === " " ? c : " ")).join("") : "";
      const scanned = inComments ? comments : codeOnly ? code : line;
      for (const _ of scanned.matchAll(pattern)) report(at, message);
    }
  });
  return checked;
}

/** Texts with what the checks must say of them, run before every check of the repository. */
const FIXTURES: { file: string; text: string; expect: string[] }[] = [
  {
    file: "src/a.ts",
    text: "// Spec, Limits: 20.\n/** (spec: Errors) */\n// the spec's 5 s",
    expect: ["contract's document", "contract's document", "contract's document"],
  },
  { file: "src/a.ts", text: "// an import specifier, the inspector, *.spec.ts, spec-limits", expect: [] },
  { file: "src/a.ts", text: "// the OpenAPI spec", expect: ["OpenAPI document"] },
  {
    file: "src/a.ts",
    text: 'const a = "the spec"; // made in b.ts',
    expect: ["b.ts names no file", "contract's document"],
  },
  { file: "src/a.ts", text: "const spec = document; f(spec, spec.paths);", expect: [] },
  { file: "src/a.ts", text: "// lib/zod-messages.ts, partner-admission.ts, drizzle-orm/table.js", expect: [] },
  { file: "src/a.ts", text: "// lib/nowhere-at-all.ts and gone-for-good.ts", expect: ["lib/nowhere", "gone-for-good"] },
  // What a run writes is not in a fresh clone: never looked for, whether or not a run has left it here.
  { file: "src/a.ts", text: "// written to test-artifacts/a11y-report.json", expect: [] },
  {
    file: "docs/a.md",
    text: "Run `node connect.mjs`.\n```ts\n// server.ts\n```\nSee missing.md",
    expect: ["missing.md"],
  },
  {
    file: "src/a.ts",
    text: "// docs/errors.md, Codes; docs/errors.md, No such heading",
    expect: ['no section "No such'],
  },
];

function selfTest(files: RepositoryFiles) {
  const failures = FIXTURES.flatMap(({ file, text, expect }) => {
    const said: string[] = [];
    check(file, text, files, (_, message) => said.push(message));
    const fits = said.length === expect.length && expect.every((part, i) => said[i]?.includes(part));
    return fits
      ? []
      : [`self-test: ${JSON.stringify(text)} gave ${JSON.stringify(said)}, not ${JSON.stringify(expect)}`];
  });
  for (const failure of failures) console.log(failure);
  return failures.length === 0;
}

function main() {
  const sources = [...SINGLE_FILES.filter((f) => existsSync(join(ROOT, f)))];
  for (const { dir, match } of SOURCES) sources.push(...filesUnder(dir, match));
  const files = repositoryFiles();
  if (!selfTest(files)) process.exit(1);
  if (process.argv.includes("--self-test")) return console.log(`references: self-test of ${FIXTURES.length} passed`);

  const problems: Problem[] = [];
  let checked = 0;

  for (const file of sources) {
    if (file === SELF) continue; // its own comments show the forms it looks for
    let text: string;
    try {
      text = readFileSync(join(ROOT, file), "utf8");
    } catch {
      continue; // removed while the check ran
    }
    checked += check(file, text, files, (line, message) => problems.push({ file, line, message }));
  }

  const byFile = (a: Problem, b: Problem) => a.file.localeCompare(b.file) || a.line - b.line;
  for (const { file, line, message } of problems.sort(byFile)) console.log(`${file}:${line}: ${message}`);
  if (problems.length > 0) {
    const folders = new Map();
    for (const { file } of problems) {
      const top = file.includes("/") ? file.split("/")[0] : file;
      folders.set(top, (folders.get(top) ?? 0) + 1);
    }
    const summary = [...folders].map(([folder, n]) => `${folder}: ${n}`).join(", ");
    console.log(`references: ${checked} checked, ${problems.length} problems (${summary})`);
    process.exit(1);
  }
  console.log(`references: ${checked} checked, all found`);
}

main();
