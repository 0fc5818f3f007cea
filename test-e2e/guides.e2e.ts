import type { BrowserContext, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { GUIDES } from "../scripts/guides.ts";
import { PORTS, SHOTS, workerAndBrowser } from "./local-worker";

/**
 * The partner guides in a real browser against a real `wrangler dev`: reached from the reference at /docs, each
 * drawn within its CSP, and every link on every page leading to a page of this service that answers
 * (docs/architecture.md, Pages).
 */
const PORT = PORTS.guides;
const BASE = `http://localhost:${PORT}`;
const { browser } = workerAndBrowser(PORT);

/** A context whose requests to another origin are recorded and refused, and a page that records CSP refusals. */
async function closedContext(): Promise<{ context: BrowserContext; elsewhere: string[] }> {
  const context = await browser().newContext();
  const elsewhere: string[] = [];
  await context.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin === BASE) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  await context.addInitScript(`
    window.refused = [];
    document.addEventListener("securitypolicyviolation", (event) =>
      window.refused.push(event.effectiveDirective + " " + event.blockedURI));
  `);
  return { context, elsewhere };
}

/** Every link of the page (anchors and stylesheets), as the browser resolved it. */
const hrefsOf = (page: Page) =>
  page.evaluate<string[]>("[...document.querySelectorAll('a[href], link[href]')].map((element) => element.href)");

describe("the partner guides", () => {
  it("are reached from /docs, one link at a time, and link only to pages of this service that answer", async () => {
    const { context, elsewhere } = await closedContext();
    const page = await context.newPage();

    // The reference's description links to the guides' index.
    await page.goto(`${BASE}/docs`);
    const toGuides = page.locator('a[href="/docs/guides"]').first();
    await toGuides.waitFor();
    await toGuides.click();
    await page.waitForURL(`${BASE}/docs/guides`);
    await page.getByRole("heading", { level: 1, name: "Guides" }).waitFor();

    const visited: string[] = [];
    const checked = new Map<string, number>();
    for (const name of GUIDES) {
      await page.goto(`${BASE}/docs/guides`);
      await page
        .locator("main")
        .getByRole("link")
        .and(page.locator(`a[href="/docs/guides/${name}"]`))
        .click();
      await page.waitForURL(`${BASE}/docs/guides/${name}`);
      // The stylesheet applied: the page's CSP let it in.
      expect(await page.evaluate("getComputedStyle(document.body).margin")).toBe("0px");
      expect(await page.evaluate("window.refused")).toEqual([]);
      if (name === "webhooks") await page.screenshot({ path: `${SHOTS}/guide-webhooks.png`, fullPage: false });
      visited.push(name);

      for (const href of await hrefsOf(page)) {
        const url = new URL(href);
        expect(url.origin, `${name} links to ${href}`).toBe(BASE);
        const path = url.pathname;
        if (!checked.has(path)) checked.set(path, (await context.request.get(`${BASE}${path}`)).status());
        expect(checked.get(path), `${name} links to ${href}`).toBe(200);
        if (url.hash) {
          const target = await context.request.get(`${BASE}${path}`);
          expect(await target.text(), `${name} links to ${href}`).toContain(` id="${url.hash.slice(1)}"`);
        }
      }
    }
    expect(visited).toEqual(GUIDES);
    expect(elsewhere).toEqual([]);
    await context.close();
  });

  it("answers / with a page pointing to the reference, the guides and the dashboard", async () => {
    const { context, elsewhere } = await closedContext();
    const page = await context.newPage();
    const response = await page.goto(`${BASE}/`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toMatch(/^default-src 'none'; style-src 'self'; /);
    for (const path of ["/docs", "/docs/guides", "/dashboard"]) {
      expect(await page.locator(`main a[href="${path}"]`).count(), path).toBe(1);
    }
    await page.locator('main a[href="/dashboard"]').click();
    await page.waitForURL(/\/dashboard\/sign-in/);
    expect(elsewhere).toEqual([]);
    await context.close();
  });
});
