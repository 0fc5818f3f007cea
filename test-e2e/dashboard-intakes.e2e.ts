import { mkdirSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callApi,
  FAILING_IMPACTS,
  launchChromium,
  PORTS,
  type Seeded,
  SHOTS,
  sampleIntake,
  seed,
  startWorker,
  unique,
  VIEWPORTS,
} from "./local-worker";

/**
 * The owner's intake pages in a real browser against a real `wrangler dev` (docs/decisions.md, The owner's dashboard):
 * no change warning right after an approval, removing a revoked key's intake through its confirmation (which frees
 * its place among the 5), and a failed sign-in that keeps the email; at a phone and a desktop size, each page checked
 * with axe-core (no serious or critical violation) and photographed to test-artifacts/screenshots.
 */
const PORT = PORTS["dashboard-intakes"];
const BASE = `http://localhost:${PORT}`;

let browser: Browser;
let context: BrowserContext;
let page: Page;
let stopWorker: () => Promise<void>;
let demo: Seeded;

const api = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
  callApi(BASE, init.token ?? demo.api_key, path, init);

async function apiJson<T>(path: string, init: Parameters<typeof api>[1] = {}): Promise<T> {
  const response = await api(path, init);
  const body = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${body}`);
  return JSON.parse(body) as T;
}

/** The serious and critical axe violations of the page as it is, one line each (none expected). */
async function violations(on: Page) {
  const results = await new AxeBuilder({ page: on }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
  return results.violations
    .filter((violation) => FAILING_IMPACTS.has(violation.impact ?? ""))
    .map((violation) => `${on.url()}: ${violation.id} at ${violation.nodes.map((n) => n.target.join(" ")).join(", ")}`);
}

/** A screenshot, then axe on the same page. */
async function shotAndAudit(on: Page, name: string) {
  await on.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });
  expect(await violations(on)).toEqual([]);
}

/** Clicks a form's button and waits for the page its answer leads to (the POST, then the 303's GET). */
const submitWith = async (button: Locator) => {
  await Promise.all([page.waitForEvent("load"), button.click()]);
};

/** Deletes the demo key's intakes through the partner API, so that each size starts below the limit of 5. */
async function clearIntakes() {
  const { data } = await apiJson<{ data: Array<{ id: number }> }>("/api/v1/intakes");
  for (const intake of data) {
    expect((await api(`/api/v1/intakes/${intake.id}`, { method: "DELETE" })).status).toBe(204);
  }
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  demo = await seed();
  stopWorker = await startWorker(PORT);
  browser = await launchChromium();
  // A context of our own: AxeBuilder opens a page beside the audited one, which browser.newPage() cannot do.
  context = await browser.newContext({ viewport: VIEWPORTS[0] });
  page = await context.newPage();
  await page.goto(`${BASE}/dashboard/sign-in`);
  await page.getByLabel("Email address").fill(demo.owner_email);
  await page.getByLabel("Password").fill(demo.owner_password);
  await submitWith(page.getByRole("button", { name: "Sign in" }));
  expect(page.url()).toBe(`${BASE}/dashboard`);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopWorker?.();
});

describe.each(VIEWPORTS)("the owner's intakes at $name size", (viewport) => {
  beforeAll(async () => {
    await page.setViewportSize({ width: viewport.width, height: viewport.height });
    await clearIntakes();
  });

  it("shows no change warning right after an approval, and the change after a PATCH", async () => {
    const created = await apiJson<{ id: number }>("/api/v1/intakes", { method: "POST", body: sampleIntake() });
    await page.goto(`${BASE}/dashboard/intakes/${created.id}`);
    await submitWith(page.getByRole("button", { name: "Approve and switch on" }));
    expect(page.url()).toBe(`${BASE}/dashboard/intakes/${created.id}`);
    expect(await page.getByTestId("changes").count()).toBe(0);
    expect(await page.textContent("main")).not.toContain("Changed since the version you approved");
    await shotAndAudit(page, `dashboard-intake-${viewport.name}`);

    const patched = await api(`/api/v1/intakes/${created.id}`, {
      method: "PATCH",
      body: { title: "Colour and cut consultation" },
    });
    expect(patched.status).toBe(200);
    await page.reload();
    const changes = (await page.getByTestId("changes").textContent()) ?? "";
    expect(changes).toContain("Title: “Colour consultation” → “Colour and cut consultation”");
  });

  it("removes a revoked key's intake after a confirmation, and a new intake can then be registered", async () => {
    await page.goto(`${BASE}/dashboard/keys`);
    const label = `E2E ${unique()}`;
    await page.getByLabel("Name (who will use it)").fill(label);
    await submitWith(page.getByRole("button", { name: "Create key" }));
    const key = (await page.getByTestId("new-key").textContent())?.trim() ?? "";
    const orphan = await apiJson<{ id: number; name: string }>("/api/v1/intakes", {
      method: "POST",
      body: { ...sampleIntake(), title: "Of a key about to be revoked" },
      token: key,
    });
    // The business fills up to its 5 intakes.
    while ((await api("/api/v1/intakes", { method: "POST", body: sampleIntake() })).status === 201);
    await page.getByRole("link", { name: `Revoke ${label}` }).click();
    await submitWith(page.getByRole("button", { name: "Revoke the key" }));
    expect((await api("/api/v1/intakes", { method: "POST", body: sampleIntake() })).status).toBe(403);

    await page.goto(`${BASE}/dashboard/intakes/${orphan.id}`);
    await page.getByRole("link", { name: "Remove this intake" }).click();
    expect(page.url()).toBe(`${BASE}/dashboard/intakes/${orphan.id}/remove`);
    const stops = (await page.getByTestId("stops").textContent()) ?? "";
    expect(stops).toContain("Of a key about to be revoked");
    expect(stops).toContain(orphan.name);
    expect(stops).toContain("No response is stored.");
    await shotAndAudit(page, `dashboard-intake-remove-confirm-${viewport.name}`);

    await submitWith(page.getByRole("button", { name: "Remove the intake" }));
    expect(page.url()).toBe(`${BASE}/dashboard/intakes?removed=1`);
    expect(await page.getByTestId("notice").textContent()).toContain("The intake was removed");
    expect(await page.textContent("main")).not.toContain("Of a key about to be revoked");
    await shotAndAudit(page, `dashboard-intake-remove-done-${viewport.name}`);
    expect((await api("/api/v1/intakes", { method: "POST", body: sampleIntake() })).status).toBe(201);
  });

  it("keeps the email after a failed sign-in, and not the password", async () => {
    const signedOut = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
    const signIn = await signedOut.newPage();
    const email = `o'brien+${unique()}@example.com`;
    await signIn.goto(`${BASE}/dashboard/sign-in`);
    await signIn.getByLabel("Email address").fill(email);
    await signIn.getByLabel("Password").fill("not the password");
    await Promise.all([signIn.waitForEvent("load"), signIn.getByRole("button", { name: "Sign in" }).click()]);
    expect(await signIn.getByRole("alert").textContent()).toBe("The email address or password is not correct.");
    expect(await signIn.getByLabel("Email address").inputValue()).toBe(email);
    expect(await signIn.getByLabel("Password").inputValue()).toBe("");
    await shotAndAudit(signIn, `sign-in-failed-${viewport.name}`);
    await signedOut.close();
  });
});
