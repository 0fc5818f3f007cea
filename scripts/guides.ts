// `npm run guides`: renders the partner guides, docs/guides/*.md, to static pages under assets/ (committed), which
// the Worker serves from its ASSETS binding (src/routes/guides.ts), so that no guide text enters the Worker's bundle
// (docs/performance.md, Bundle). A small Markdown subset of our own: headings with ids, paragraphs, lists, fenced
// code, tables, links, inline code, bold and italic; every character of the source is HTML-escaped. One layout, whose
// stylesheet is the static assets/docs/guides/guides.css (the pages' CSP admits styles of this origin only). A link
// may only lead to a page of this service (another guide, the reference at /docs, the dashboard): anything else fails
// the render. test/api/guides.test.ts renders the sources again and compares them with what the Worker serves.

/** A guide's file name without `.md`, in the order the navigation lists them; a source not listed fails the render. */
export const GUIDES = [
  ...["getting-started", "sandbox", "webhooks", "connected-actions", "intakes", "knowledge", "syncing", "errors"],
  ...["rate-limits", "idempotency", "versioning", "oauth"],
];

/** The error codes the errors guide lists, as src/lib/error-codes.ts holds them (runtime-only codes left out). */
export type ErrorCodes = Record<string, { status: number; meaning: string; runtime?: true }>;

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => ENTITIES[char] ?? char);

/**
 * Where a link may point: a page of this service. A guide's source names another as `<name>.md`, as the repository
 * does.
 */
const SERVICE_PAGES = new Set(["/", "/docs", "/docs/guides", "/dashboard"]);

type Page = { name: string; ids: Set<string>; links: string[] };

function target(href: string, page: Page): string {
  const guide = /^([a-z][a-z0-9-]*)\.md(#[\w-]+)?$/.exec(href);
  const resolved = guide ? `/docs/guides/${guide[1]}${guide[2] ?? ""}` : href;
  const path = resolved.split("#")[0] ?? "";
  if (path !== "" && !SERVICE_PAGES.has(path) && !/^\/docs\/guides\/[a-z][a-z0-9-]*$/.test(path)) {
    throw new Error(`docs/guides/${page.name}.md links to ${href}, outside the service`);
  }
  page.links.push(resolved.startsWith("#") ? `/docs/guides/${page.name}${resolved}` : resolved);
  return resolved;
}

const INLINE = /`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\)|\*\*(.+?)\*\*|\*(\S(?:[^*]*?\S)?)\*/g;

function inline(text: string, page: Page): string {
  let html = "";
  let last = 0;
  for (const match of text.matchAll(INLINE)) {
    html += escapeHtml(text.slice(last, match.index));
    const [whole, code, label, href, bold, italic] = match;
    if (code !== undefined) html += `<code>${escapeHtml(code)}</code>`;
    else if (label !== undefined && href !== undefined)
      html += `<a href="${escapeHtml(target(href, page))}">${inline(label, page)}</a>`;
    else if (bold !== undefined) html += `<strong>${inline(bold, page)}</strong>`;
    else html += `<em>${inline(italic ?? "", page)}</em>`;
    last = match.index + whole.length;
  }
  return html + escapeHtml(text.slice(last));
}

/** A heading's id: its words in lower case, joined by hyphens; a repeat on the page gets `-2`, `-3`… */
function headingId(text: string, page: Page): string {
  const base = text
    .replace(/[`*]|\]\([^)]*\)|\[/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
  let id = base || "section";
  for (let n = 2; page.ids.has(id); n++) id = `${base}-${n}`;
  page.ids.add(id);
  return id;
}

const cells = (line: string) =>
  line
    .trim()
    .replace(/^\||\|$/g, "")
    .split(/(?<!\\)\|/)
    .map((cell) => cell.trim().replace(/\\\|/g, "|"));

const BLOCK_START = /^(```|#{1,4} |\||[-*] |\d+\. )/;

/** The page's Markdown, block by block. */
function render(markdown: string, page: Page): { title: string; html: string } {
  const lines = markdown.replace(/\r\n/g, "\n").split("\n");
  const out: string[] = [];
  let title = "";
  for (let i = 0; i < lines.length; ) {
    const line = lines[i] ?? "";
    if (line.trim() === "") {
      i++;
    } else if (line.startsWith("```")) {
      const language = line.slice(3).trim();
      const code: string[] = [];
      for (i++; i < lines.length && !(lines[i] ?? "").startsWith("```"); i++) code.push(lines[i] ?? "");
      i++;
      const attribute = language ? ` class="language-${escapeHtml(language)}"` : "";
      out.push(`<pre><code${attribute}>${escapeHtml(code.join("\n"))}</code></pre>`);
    } else if (/^#{1,4} /.test(line)) {
      const level = line.indexOf(" ");
      const text = line.slice(level + 1).trim();
      if (level === 1) title ||= text.replace(/[`*]/g, "");
      out.push(`<h${level} id="${headingId(text, page)}">${inline(text, page)}</h${level}>`);
      i++;
    } else if (line.startsWith("|")) {
      const rows: string[][] = [];
      for (; i < lines.length && (lines[i] ?? "").startsWith("|"); i++) rows.push(cells(lines[i] ?? ""));
      const [head = [], , ...body] = rows;
      const row = (tag: string, values: string[]) =>
        `<tr>${values.map((value) => `<${tag}>${inline(value, page)}</${tag}>`).join("")}</tr>`;
      const bodyRows = body.map((values) => row("td", values)).join("\n");
      out.push(`<table>\n<thead>${row("th", head)}</thead>\n<tbody>\n${bodyRows}\n</tbody>\n</table>`);
    } else if (/^([-*]|\d+\.) /.test(line)) {
      const ordered = /^\d/.test(line);
      const items: string[] = [];
      for (; i < lines.length; i++) {
        const next = lines[i] ?? "";
        if ((ordered ? /^\d+\. / : /^[-*] /).test(next)) items.push(next.replace(/^([-*]|\d+\.) /, ""));
        else if (/^\s+\S/.test(next) && items.length > 0) items[items.length - 1] += ` ${next.trim()}`;
        else break;
      }
      const tag = ordered ? "ol" : "ul";
      out.push(`<${tag}>\n${items.map((item) => `<li>${inline(item, page)}</li>`).join("\n")}\n</${tag}>`);
    } else {
      const text: string[] = [];
      for (; i < lines.length && (lines[i] ?? "").trim() !== "" && !BLOCK_START.test(lines[i] ?? ""); i++) {
        text.push((lines[i] ?? "").trim());
      }
      out.push(`<p>${inline(text.join(" "), page)}</p>`);
    }
  }
  if (!title) throw new Error(`docs/guides/${page.name}.md has no "# " title`);
  return { title, html: out.join("\n") };
}

/** The errors guide's table, from the codes themselves rather than a copy (the line `{{error-codes}}`). */
function expand(markdown: string, name: string, codes: ErrorCodes): string {
  return markdown.replace(/^\{\{([\w-]+)\}\}$/gm, (_, directive: string) => {
    if (directive !== "error-codes") throw new Error(`docs/guides/${name}.md: unknown {{${directive}}}`);
    const rows = Object.entries(codes)
      .filter(([, code]) => !code.runtime)
      .map(([code, { status, meaning }]) => `| \`${code}\` | ${status} | ${meaning} |`);
    return ["| Code | Status | Meaning and what to do |", "|---|---|---|", ...rows].join("\n");
  });
}

/** The one layout of every page: the title, the navigation (every guide and the reference), the content. */
function layout(title: string, current: string, nav: [path: string, title: string][], content: string): string {
  const links = nav.map(([path, text]) => {
    const here = path === current ? ' aria-current="page"' : "";
    return `<li><a href="${path}"${here}>${escapeHtml(text)}</a></li>`;
  });
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Secretary Partner API</title><link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/docs/guides/guides.css"></head>
<body><a class="skip" href="#content">Skip to the content</a>
<header><a href="/">Secretary Partner API</a></header>
<div class="columns"><nav aria-label="Guides"><ul>
${links.join("\n")}
</ul></nav>
<main id="content">
${content}
</main></div>
</body></html>
`;
}

const HOME = `# Secretary Partner API

Integrate a booking tool, a shop or a CRM with the businesses that use the Secretary.

- [API reference](/docs): every endpoint, event and error, with examples.
- [Guides](/docs/guides): getting started, the sandbox, webhooks, connected actions, intakes and more.
- [Dashboard](/dashboard): for business owners, to manage API keys, apps, actions and intakes.
`;

const INDEX_INTRO = `# Guides

How to build an integration, step by step. The [API reference](/docs) lists every endpoint, field and event.
`;

/**
 * Every page to write, by its path under assets/: each guide, the guides' index and the page at `/`. Their one
 * stylesheet, assets/docs/guides/guides.css, is a static file of its own.
 * Throws on a link outside the service, to a guide that does not exist, or to a heading a page does not have.
 */
export function renderGuides(sources: Record<string, string>, codes: ErrorCodes): Record<string, string> {
  for (const name of Object.keys(sources)) {
    if (!GUIDES.includes(name)) throw new Error(`docs/guides/${name}.md is not listed in GUIDES (scripts/guides.ts)`);
  }
  const pages = GUIDES.map((name) => {
    const markdown = sources[name];
    if (markdown === undefined) throw new Error(`docs/guides/${name}.md is missing`);
    const page: Page = { name, ids: new Set(), links: [] };
    return { page, ...render(expand(markdown, name, codes), page) };
  });
  const nav: [string, string][] = [
    ...pages.map(({ page, title }): [string, string] => [`/docs/guides/${page.name}`, title]),
    ["/docs", "API reference"],
  ];
  const list = pages.map(({ page, title }) => `- [${title}](${page.name}.md)`).join("\n");
  const index: Page = { name: "index", ids: new Set(), links: [] };
  const home: Page = { name: "home", ids: new Set(), links: [] };
  const files: Record<string, string> = {
    "docs/guides/index.html": layout("Guides", "/docs/guides", nav, render(`${INDEX_INTRO}\n${list}\n`, index).html),
    "index.html": layout("Home", "/", nav, render(HOME, home).html),
  };
  for (const { page, title, html } of pages) {
    files[`docs/guides/${page.name}.html`] = layout(title, `/docs/guides/${page.name}`, nav, html);
  }
  const ids = new Map(pages.map(({ page }) => [`/docs/guides/${page.name}`, page.ids]));
  for (const page of [index, home, ...pages.map(({ page }) => page)]) {
    for (const link of page.links) {
      const [path = "", fragment] = link.split("#");
      if (path.startsWith("/docs/guides/") && !ids.has(path)) throw new Error(`${page.name}: no guide at ${link}`);
      if (fragment && !ids.get(path)?.has(fragment)) throw new Error(`${page.name}: no heading at ${link}`);
    }
  }
  return files;
}

type NodeFs = {
  readdirSync(path: URL): string[];
  readFileSync(path: URL, encoding: "utf8"): string;
  writeFileSync(path: URL, text: string): void;
  rmSync(path: URL): void;
};
type NodeProcess = { argv: string[]; getBuiltinModule(id: "node:fs"): NodeFs };

/** Run by Node (not when a test imports the renderer): read the sources, write the pages, remove stale ones. */
const node = (globalThis as { process?: NodeProcess }).process;
if (node?.argv[1] !== undefined && new URL(import.meta.url).pathname === node.argv[1]) {
  const fs = node.getBuiltinModule("node:fs");
  const root = new URL("../", import.meta.url);
  const errorCodes: typeof import("../src/lib/error-codes") = await import(`${root}src/lib/error-codes.ts`);
  const sources = Object.fromEntries(
    fs
      .readdirSync(new URL("docs/guides/", root))
      .filter((file) => file.endsWith(".md"))
      .map((file) => [file.slice(0, -3), fs.readFileSync(new URL(`docs/guides/${file}`, root), "utf8")]),
  );
  const files = renderGuides(sources, errorCodes.ERROR_CODES);
  for (const file of fs.readdirSync(new URL("assets/docs/guides/", root))) {
    if (file !== "guides.css" && !(`docs/guides/${file}` in files))
      fs.rmSync(new URL(`assets/docs/guides/${file}`, root));
  }
  for (const [path, text] of Object.entries(files)) fs.writeFileSync(new URL(`assets/${path}`, root), text);
  const bytes = Object.values(files).reduce((sum, text) => sum + new TextEncoder().encode(text).byteLength, 0);
  console.log(
    `Rendered ${GUIDES.length} guides, the index and / to assets/ (${Object.keys(files).length} files, ${bytes} bytes).`,
  );
}
