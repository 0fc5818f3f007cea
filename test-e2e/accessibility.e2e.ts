import { mkdirSync, writeFileSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callApi,
  eventually,
  FAILING_IMPACTS,
  launchChromium,
  PORTS,
  type Seeded,
  SHOTS,
  sampleAction,
  sampleIntake,
  seed,
  startReceiver,
  startWorker,
  unique,
  VIEWPORTS,
} from "./local-worker";

/**
 * Accessibility of every page an owner sees: axe-core (WCAG 2.0 and 2.1, A and AA) in a real browser
 * against a real `wrangler dev`, at a phone-sized and a desktop viewport. A serious or critical violation fails the
 * test, named by page, rule and element. The dashboard's pages are found by following its links from the overview,
 * so a page linked from another is checked without being listed here. A screenshot of every page at both sizes goes
 * to test-artifacts/screenshots/a11y-<page>-<viewport>.png, and every finding, whatever its impact, to
 * test-artifacts/a11y-report.json (both git-ignored).
 */
const PORT = PORTS.accessibility;
const BASE = `http://localhost:${PORT}`;
/** The rules that fail the test: WCAG 2.0 and 2.1, levels A and AA. */
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];
/** Axe's best practices are run too, for the report only. */
const REPORTED_TAGS = [...TAGS, "best-practice"];
/** A crawl that finds more pages than this is following something it should not (a link that makes new links). */
const MAX_PAGES = 80;

let browser: Browser;
let context: BrowserContext;
let page: Page;

/** Every resource a page asked for and did not get (a 4xx or 5xx of a stylesheet, icon or image, never a page itself). */
const missing: string[] = [];
const watchResources = (watched: BrowserContext) =>
  watched.on("response", (response) => {
    if (response.status() >= 400 && response.request().resourceType() !== "document") {
      missing.push(`${response.status()} ${new URL(response.url()).pathname}`);
    }
  });
let stopWorker: () => Promise<void>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let demo: Seeded;
/** What the seed lacks, created through the partner API: one of each kind with a detail page. */
const created = { action: 0, intake: 0, endpoint: 0 };
/** Every page checked, by name (for the screenshots' file names, each used once). */
const checked = new Set<string>();
/**
 * Every violation of any impact, what axe could not decide (to check by eye), and the rules passed, per page and
 * viewport: written to test-artifacts/a11y-report.json, for what does not fail the test.
 */
const report: Array<{
  page: string;
  path: string;
  viewport: string;
  passes: string[];
  incomplete: Array<{ id: string; targets: string[] }>;
  violations: Array<{ id: string; impact: string; tags: string[]; help: string; targets: string[] }>;
}> = [];

const api = (path: string, init: { method?: string; body?: unknown } = {}) => callApi(BASE, demo.api_key, path, init);

async function apiJson<T>(path: string, init: Parameters<typeof api>[1] = {}): Promise<T> {
  const response = await api(path, init);
  const body = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${body}`);
  return JSON.parse(body) as T;
}

/**
 * Runs axe on the page as it is, at each viewport, and saves a screenshot of each; answers one line per serious or
 * critical violation: "page @ viewport: rule (impact) at target — help".
 */
async function audit(on: Page, name: string): Promise<string[]> {
  expect(checked.has(name), `two pages named ${name}`).toBe(false);
  checked.add(name);
  const problems: string[] = [];
  for (const viewport of VIEWPORTS) {
    await on.setViewportSize({ width: viewport.width, height: viewport.height });
    const results = await new AxeBuilder({ page: on }).withTags(REPORTED_TAGS).analyze();
    report.push({
      page: name,
      path: new URL(on.url()).pathname,
      viewport: viewport.name,
      passes: results.passes.map((rule) => rule.id),
      incomplete: results.incomplete.map((rule) => ({
        id: rule.id,
        targets: rule.nodes.map(
          (node) => `${node.target.join(" ")}: ${node.any.map((check) => check.message).join(" ")}`,
        ),
      })),
      violations: results.violations.map((violation) => ({
        id: violation.id,
        impact: violation.impact ?? "",
        tags: violation.tags,
        help: violation.help,
        targets: violation.nodes.map((node) => node.target.join(" ")),
      })),
    });
    for (const violation of results.violations) {
      if (!FAILING_IMPACTS.has(violation.impact ?? "")) continue;
      if (!violation.tags.some((tag) => TAGS.includes(tag))) continue;
      for (const node of violation.nodes) {
        problems.push(
          `${name} (${new URL(on.url()).pathname}) @ ${viewport.name}: ${violation.id} (${violation.impact}) at ` +
            `${node.target.join(" ")} — ${violation.help}`,
        );
      }
    }
    await on.screenshot({ path: `${SHOTS}/a11y-${name}-${viewport.name}.png`, fullPage: true });
  }
  return problems;
}

/** A page's name for its screenshot: its path after /dashboard, ids as `id` ("actions-id", "keys-id-revoke"). */
function pageName(url: URL): string {
  const rest = url.pathname
    .replace(/^\/dashboard\/?/, "")
    .split("/")
    .filter(Boolean)
    .map((segment) => (/^\d+$/.test(segment) ? "id" : segment.replace(/[^A-Za-z0-9_-]/g, "_")));
  const base = rest.length === 0 ? "overview" : rest.join("-");
  let name = base;
  for (let n = 2; checked.has(name); n++) name = `${base}-${n}`;
  return name;
}

/** The dashboard pages this page links to: same origin, under /dashboard, not signing out; without the fragment. */
async function dashboardLinks(on: Page): Promise<string[]> {
  const hrefs = await on
    .locator("a[href]")
    .evaluateAll((links) => links.map((link) => link.getAttribute("href") ?? ""));
  const found = new Set<string>();
  for (const href of hrefs) {
    const url = new URL(href, on.url());
    url.hash = "";
    if (url.origin !== BASE) continue;
    if (url.pathname !== "/dashboard" && !url.pathname.startsWith("/dashboard/")) continue;
    if (/\/sign-(out|in)\b/.test(url.pathname)) continue;
    found.add(url.href);
  }
  return [...found];
}

async function signIn(on: Page) {
  await on.goto(`${BASE}/dashboard/sign-in`);
  await on.getByLabel("Email address").fill(demo.owner_email);
  await on.getByLabel("Password").fill(demo.owner_password);
  await on.getByRole("button", { name: "Sign in" }).click();
  expect(on.url()).toBe(`${BASE}/dashboard`);
}

/** An OAuth client of the local receiver, and an authorization request for it (PKCE S256). */
async function authorizeUrl() {
  const response = await fetch(`${BASE}/api/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "A11y Booking Tool",
      redirect_uris: [`${receiver.url}/callback`],
      token_endpoint_auth_method: "none",
    }),
  });
  expect(response.status).toBe(201);
  const client = (await response.json()) as { client_id: string };
  const verifier = `${unique()}${"v".repeat(50)}`;
  const challenge = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))).toString(
    "base64url",
  );
  const query = new URLSearchParams({
    response_type: "code",
    client_id: client.client_id,
    redirect_uri: `${receiver.url}/callback`,
    scope: "api",
    state: `a11y-${unique()}`,
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  return `${BASE}/oauth/authorize?${query}`;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  demo = await seed();
  receiver = await startReceiver();
  stopWorker = await startWorker(PORT);
  browser = await launchChromium();
  // A context of our own: AxeBuilder opens a page beside the audited one to finish its run, which a page from
  // browser.newPage() cannot do.
  context = await browser.newContext({ viewport: VIEWPORTS[0] });
  watchResources(context);
  page = await context.newPage();

  // One of each kind with a detail page, and a text pushed by an app, so that every list has a row to link from.
  const action = await apiJson<{ id: number }>("/api/v1/actions", {
    method: "POST",
    body: sampleAction(receiver.url),
  });
  created.action = action.id;
  const intake = await apiJson<{ id: number }>("/api/v1/intakes", {
    method: "POST",
    body: sampleIntake(),
  });
  created.intake = intake.id;
  const endpoint = await apiJson<{ id: number }>("/api/v1/webhooks", {
    method: "POST",
    body: { url: `${receiver.url}/hooks`, events: ["booking.created", "order.created"] },
  });
  created.endpoint = endpoint.id;
  const pushed = await api(`/api/v1/knowledge/a11y-${unique()}`, {
    method: "PUT",
    body: { title: "Holiday hours", content: "Closed from 24 to 26 December, open again on the 27th." },
  });
  // The demo business may be at its source limit: the page then shows the seeded source alone, which is fine.
  expect([200, 201, 403]).toContain(pushed.status);
}, 120_000);

afterAll(async () => {
  writeFileSync("test-artifacts/a11y-report.json", `${JSON.stringify(report, null, 2)}\n`);
  await browser?.close();
  await stopWorker?.();
  await receiver?.stop();
});

describe("accessibility of the owner's pages (axe-core, WCAG 2.1 AA)", () => {
  it("has no serious or critical violation on the signed-out pages", async () => {
    const signedOut = await browser.newContext({ viewport: VIEWPORTS[0] });
    watchResources(signedOut);
    const on = await signedOut.newPage();
    const problems: string[] = [];

    await on.goto(`${BASE}/dashboard`);
    expect(on.url()).toBe(`${BASE}/dashboard/sign-in`);
    problems.push(...(await audit(on, "sign-in")));
    await on.getByLabel("Email address").fill(demo.owner_email);
    await on.getByLabel("Password").fill("not the password");
    await on.getByRole("button", { name: "Sign in" }).click();
    await on.getByRole("alert").waitFor();
    problems.push(...(await audit(on, "sign-in-refused")));

    // The authorization page, signed out: its own sign-in form; and its page for a link that is not valid.
    await on.goto(await authorizeUrl());
    await on.getByLabel("Email address").waitFor();
    problems.push(...(await audit(on, "oauth-sign-in")));
    await on.goto(`${BASE}/oauth/authorize?response_type=code&client_id=unknown`);
    await on.getByRole("alert").waitFor();
    problems.push(...(await audit(on, "oauth-invalid-link")));

    await signedOut.close();
    expect(problems).toEqual([]);
  });

  it("has no serious or critical violation on the OAuth consent page", async () => {
    await signIn(page);
    await page.goto(await authorizeUrl());
    await page.getByRole("button", { name: "Approve" }).waitFor();
    const problems = await audit(page, "oauth-consent");
    // Approved, the app is connected: the dashboard's Connected apps page then has a row (and whatever it links to).
    await page.getByRole("button", { name: "Approve" }).click();
    await eventually(async () => receiver.requests.some((r) => r.url.startsWith("/callback?")));
    expect(problems).toEqual([]);
  });

  it("lets the keyboard skip the dashboard's navigation", async () => {
    await page.goto(`${BASE}/dashboard`);
    expect(page.url()).toBe(`${BASE}/dashboard`);
    await page.keyboard.press("Tab");
    const skip = page.getByRole("link", { name: "Skip to content" });
    await expect.poll(() => skip.evaluate((link) => link === link.ownerDocument.activeElement)).toBe(true);
    const box = await skip.boundingBox();
    expect(box && box.x >= 0 && box.y >= 0 && box.width > 0).toBe(true);
    await page.keyboard.press("Enter");
    expect(new URL(page.url()).hash).toBe("#main");
  });

  it("folds the navigation behind Menu on a phone, and shows it whole without Menu on a desktop", async () => {
    const [phone, desktop] = VIEWPORTS;
    const nav = page.getByRole("navigation", { name: "Dashboard" });
    const menu = nav.locator("summary");
    const webhooks = nav.getByRole("link", { name: "Webhooks" });
    const headerHeight = async () => (await page.locator("header").boundingBox())?.height ?? 0;

    await page.setViewportSize({ width: phone.width, height: phone.height });
    await page.goto(`${BASE}/dashboard`);
    expect(await menu.isVisible()).toBe(true);
    expect(await webhooks.isVisible()).toBe(false);
    // Two short lines, the business and Menu, before any content.
    expect(await headerHeight()).toBeLessThan(80);
    await menu.focus();
    await page.keyboard.press("Enter");
    expect(await webhooks.isVisible()).toBe(true);
    await page.screenshot({ path: `${SHOTS}/navigation-open-phone.png` });
    await Promise.all([page.waitForURL(`${BASE}/dashboard/webhooks`), webhooks.click()]);

    await page.setViewportSize({ width: desktop.width, height: desktop.height });
    await page.goto(`${BASE}/dashboard`);
    expect(await menu.isVisible()).toBe(false);
    expect(await webhooks.isVisible()).toBe(true);
    expect(await headerHeight()).toBeLessThan(120);
    await page.setViewportSize({ width: phone.width, height: phone.height });
  });

  it("has no serious or critical violation on any dashboard page reachable by a link", async () => {
    await page.goto(`${BASE}/dashboard`);
    expect(page.url()).toBe(`${BASE}/dashboard`);
    // A delivery on the endpoint's page, so that its history shows one.
    await page.goto(`${BASE}/dashboard/webhooks/${created.endpoint}`);
    await page.getByRole("button", { name: "Send a test event" }).click();
    await eventually(async () => receiver.requests.some((r) => r.headers["x-service-event"] === "ping"));

    const problems: string[] = [];
    const visited = new Set<string>();
    const queue = [`${BASE}/dashboard`];
    while (queue.length > 0) {
      const url = queue.shift() as string;
      if (visited.has(url)) continue;
      visited.add(url);
      expect(visited.size, `more than ${MAX_PAGES} pages: ${[...visited].join(", ")}`).toBeLessThanOrEqual(MAX_PAGES);
      const response = await page.goto(url);
      // A link to a page that fails, or that sends the owner to sign in again, is a broken page.
      expect(response?.status(), url).toBe(200);
      expect(page.url(), `${url} went elsewhere`).toBe(url);
      problems.push(...(await audit(page, pageName(new URL(url)))));
      for (const link of await dashboardLinks(page)) if (!visited.has(link)) queue.push(link);
    }

    // The crawl reached the seven sections and a detail page of each kind.
    const paths = [...visited].map((url) => new URL(url).pathname);
    for (const path of [
      "/dashboard",
      "/dashboard/actions",
      "/dashboard/intakes",
      "/dashboard/knowledge",
      "/dashboard/keys",
      "/dashboard/apps",
      "/dashboard/webhooks",
      `/dashboard/actions/${created.action}`,
      `/dashboard/intakes/${created.intake}`,
      `/dashboard/webhooks/${created.endpoint}`,
    ]) {
      expect(paths, `no link led to ${path}`).toContain(path);
    }
    expect(problems).toEqual([]);
  }, 300_000);

  it("has no serious or critical violation on the pages a form answers with", async () => {
    const problems: string[] = [];

    // A key just created, shown once.
    await page.goto(`${BASE}/dashboard/keys`);
    await page.getByLabel("Name (who will use it)").fill(`A11y ${unique()}`);
    await page.getByRole("button", { name: "Create key" }).click();
    await page.getByTestId("new-key").waitFor();
    problems.push(...(await audit(page, "keys-created")));

    // An action's Test, with its result and a call in the recent calls.
    await page.goto(`${BASE}/dashboard/actions/${created.action}`);
    await page.getByLabel("Product code").fill("SHAMPOO-1");
    await page.getByRole("button", { name: "Test" }).click();
    await page.getByTestId("test-result").waitFor();
    problems.push(...(await audit(page, "action-tested")));

    // An intake approved, then changed by its app: the changes since the approved version.
    await page.goto(`${BASE}/dashboard/intakes/${created.intake}`);
    await page.getByRole("button", { name: "Approve and switch on" }).click();
    const patched = await api(`/api/v1/intakes/${created.intake}`, {
      method: "PATCH",
      body: {
        fields: [
          { id: "full_name", label: "What is your full name?", type: "text", required: true },
          { id: "phone", label: "Your mobile number?", type: "phone", required: true },
        ],
      },
    });
    expect(patched.status).toBe(200);
    await page.goto(`${BASE}/dashboard/intakes/${created.intake}`);
    await page.getByTestId("changes").waitFor();
    problems.push(...(await audit(page, "intake-changed")));

    // The page of an error: a detail page that does not exist.
    const missing = await page.goto(`${BASE}/dashboard/actions/999999`);
    expect(missing?.status()).toBe(404);
    problems.push(...(await audit(page, "not-found")));

    expect(problems).toEqual([]);
  }, 120_000);

  it("had no page ask for a resource the service does not have (its icon included)", () => {
    expect(missing).toEqual([]);
  });
});
