import { describe, expect, it } from "vitest";
import { otherOriginSources } from "../test/helpers/csp";
import { PORTS, SHOTS, workerAndBrowser } from "./local-worker";

/**
 * The API reference at /docs in a real browser against a real `wrangler dev`, with the network closed to every
 * other origin (docs/architecture.md, Pages): the page's script comes from the Worker itself, so the reference
 * must render and work with nothing else.
 */
const PORT = PORTS["api-reference"];
const BASE = `http://localhost:${PORT}`;
const { browser } = workerAndBrowser(PORT);

describe("the API reference at /docs", () => {
  it("renders the operations offline, from this origin only, within its CSP", async () => {
    const context = await browser().newContext();
    // Every request to another origin is recorded and refused: the page must not need one.
    const elsewhere: string[] = [];
    await context.route("**/*", (route) => {
      const url = route.request().url();
      if (new URL(url).origin === BASE) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    const page = await context.newPage();
    // What the CSP refused, as the page saw it (a script of the page's own, so written in the browser's terms).
    await page.addInitScript(`
      window.refused = [];
      document.addEventListener("securitypolicyviolation", (event) =>
        window.refused.push(event.effectiveDirective + " " + event.blockedURI));
    `);

    const response = await page.goto(`${BASE}/docs`);
    const csp = (await response?.allHeaders())?.["content-security-policy"] ?? "";
    expect(csp).toMatch(/^default-src 'none'; script-src 'self' 'sha256-[A-Za-z0-9+/]{43}='; /);
    expect(otherOriginSources(csp)).toEqual([]);

    // Every operation of the document, shown as "GET /me" in its tag's section (drawn when reached), and every event
    // of its `webhooks` section, shown as "POST booking.created" in its own.
    type Operations = Record<string, Record<string, { tags: string[] }>>;
    const openApi = (await (await fetch(`${BASE}/api/v1/openapi.json`)).json()) as {
      paths: Operations;
      webhooks: Operations;
    };
    const operations = [...Object.entries(openApi.paths), ...Object.entries(openApi.webhooks)].flatMap(
      ([path, methods]) =>
        Object.entries(methods).map(([method, operation]) => ({
          line: `${method.toUpperCase()} ${path}`,
          tag: operation.tags[0],
        })),
    );
    const listed: string[] = [];
    for (const tag of new Set(operations.map((operation) => operation.tag))) {
      await page.getByRole("complementary").getByRole("link", { name: tag, exact: true }).click();
      const list = page.getByRole("list", { name: `${tag} endpoints` });
      await list.waitFor();
      listed.push(...(await list.getByRole("listitem").allInnerTexts()));
    }
    expect(listed.map((text) => text.replace(/\s+/g, " ").trim()).sort()).toEqual(
      operations.map((operation) => operation.line).sort(),
    );
    // The script works, not only draws: going to a tag from the sidebar opened its operations' documentation.
    await page.getByRole("heading", { name: "Subscribe an endpoint", exact: true }).waitFor();
    await page.screenshot({ path: `${SHOTS}/api-reference.png` });

    expect(elsewhere).toEqual([]);
    // zod, inside the bundle, probes whether it may compile validators with Function() and goes on without when
    // refused: the one refusal expected. Anything else refused would be a part of the reference that does not work.
    const refused = (await page.evaluate("window.refused")) as string[];
    expect(new Set(refused)).toEqual(new Set(["script-src eval"]));
    await context.close();
  });
});
