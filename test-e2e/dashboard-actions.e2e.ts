import { mkdirSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callApi,
  launchChromium,
  PORTS,
  type Seeded,
  SHOTS,
  seed,
  startReceiver,
  startWorker,
  unique,
  VIEWPORTS,
} from "./local-worker";

/**
 * An action's page as the owner reads and tests it, in a real browser against a real `wrangler dev`: the parameters
 * in words, the Test form built from them (docs/architecture.md, the owner's dashboard), at a phone and a desktop
 * size, with axe-core (WCAG 2.0/2.1 A and AA) finding no serious or critical violation before and after a Test.
 */
const PORT = PORTS["dashboard-actions"];
const BASE = `http://localhost:${PORT}`;
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

let browser: Browser;
let stopWorker: () => Promise<void>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let demo: Seeded;

/** Serious or critical violations of the page as it is, one line each: rule at element — help. */
async function violations(page: Page): Promise<string[]> {
  const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
  return results.violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .flatMap((violation) =>
      violation.nodes.map(
        (node) => `${violation.id} (${violation.impact}) at ${node.target.join(" ")}: ${violation.help}`,
      ),
    );
}

/** An action registered with the seeded key, off (the owner's Test calls it all the same). */
async function registerAction() {
  const response = await callApi(BASE, demo.api_key, "/api/v1/actions", {
    method: "POST",
    body: {
      name: `stock_${unique()}`,
      title: "Check stock",
      description: "Tells whether a hair product is in stock in the salon today.",
      url: `${receiver.url}/stock-form`,
      parameters: {
        type: "object",
        properties: {
          sku: { type: "string", description: "Product code" },
          quantity: { type: "integer", description: "How many bottles" },
          gift_wrap: { type: "boolean", description: "Wrapped as a gift" },
          size: { type: "string", description: "Bottle size", enum: ["small", "large"] },
        },
        required: ["sku", "size"],
      },
    },
  });
  expect(response.status, await response.clone().text()).toBe(201);
  return ((await response.json()) as { id: number }).id;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  demo = await seed();
  receiver = await startReceiver();
  stopWorker = await startWorker(PORT);
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await stopWorker?.();
  await receiver?.stop();
});

describe("an action's page, read and tested by the owner", () => {
  for (const viewport of VIEWPORTS) {
    it(`shows the parameters in words and tests the action from its form (${viewport.name})`, async () => {
      // A context of its own: axe-core runs its checks in a second page of the page's context.
      const context = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
      const page = await context.newPage();
      await page.goto(`${BASE}/dashboard/sign-in`);
      await page.getByLabel("Email address").fill(demo.owner_email);
      await page.getByLabel("Password").fill(demo.owner_password);
      await page.getByRole("button", { name: "Sign in" }).click();
      expect(page.url()).toBe(`${BASE}/dashboard`);

      const id = await registerAction();
      await page.goto(`${BASE}/dashboard/actions/${id}`);
      const parameters = (await page.getByTestId("parameters").textContent()) ?? "";
      expect(parameters).toContain("How many bottles (optional; a whole number)");
      expect(parameters).toContain("Bottle size (required; one of: small, large)");
      expect(await page.getByText('"properties"').isVisible()).toBe(false);
      expect(await violations(page)).toEqual([]);

      await page.getByLabel("Product code").fill("SHAMPOO-1");
      await page.getByLabel("How many bottles").fill("2");
      await page.getByLabel("Wrapped as a gift").selectOption("yes");
      await page.getByLabel("Bottle size").selectOption("large");
      await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Test" }).click()]);

      const result = (await page.getByTestId("test-result").textContent()) ?? "";
      expect(result).toContain("It answered");
      expect(await page.getByTestId("answer").innerText()).toBe("in_stock: yes\nitems: 3");
      expect(await page.getByTestId("raw-answer").isVisible()).toBe(false);
      const sent = receiver.requests.filter((request) => request.url === "/stock-form").at(-1);
      expect(JSON.parse(sent?.body ?? "{}").arguments).toEqual({
        sku: "SHAMPOO-1",
        quantity: 2,
        gift_wrap: true,
        size: "large",
      });
      // The form is drawn again with what the owner typed.
      expect(await page.getByLabel("Product code").inputValue()).toBe("SHAMPOO-1");
      expect(await page.getByLabel("How many bottles").inputValue()).toBe("2");
      expect(await page.getByLabel("Wrapped as a gift").inputValue()).toBe("yes");
      expect(await page.getByLabel("Bottle size").inputValue()).toBe("large");
      expect(await violations(page)).toEqual([]);
      await page.screenshot({ path: `${SHOTS}/dashboard-action-${viewport.name}.png`, fullPage: true });
      await context.close();
    });
  }
});
