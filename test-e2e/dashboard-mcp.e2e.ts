import { mkdirSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMcpServers } from "../test/mcp-servers.ts";
import {
  callApi,
  FAILING_IMPACTS,
  launchChromium,
  PORTS,
  type Seeded,
  SHOTS,
  seed,
  startWorker,
  unique,
  VIEWPORTS,
} from "./local-worker";

/**
 * A partner's MCP server as the owner reviews it, in a real browser against a real `wrangler dev` and a real MCP
 * server (the official SDK's, test/mcp-servers.ts): the partner registers the server, the owner switches its tool on;
 * the server rewrites the tool's description and the partner refreshes it; the owner sees the old and the new
 * description side by side while the Secretary's context keeps the approved one, until the owner accepts
 * (docs/guides/connected-actions.md, From an MCP server). Each page state passes axe-core (WCAG 2.0/2.1 A and AA) at a
 * phone and a desktop size.
 */
const PORT = PORTS["dashboard-mcp"];
const BASE = `http://localhost:${PORT}`;
const TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"];

const APPROVED = "Tells whether a hair product is in stock in the salon today, by its product code.";
const CHANGED = "Tells how many bottles of a hair product the salon has today, by its product code.";

let browser: Browser;
let stopWorker: () => Promise<void>;
let mcp: Awaited<ReturnType<typeof startMcpServers>>;
let demo: Seeded;

/** The tool the box offers, read-only, with `description`. */
const stockTool = (name: string, description: string) => ({
  name,
  title: "Check stock",
  description,
  inputSchema: {
    type: "object",
    properties: { sku: { type: "string", description: "Product code" } },
    required: ["sku"],
  },
  annotations: { readOnlyHint: true },
  answer: { structured: { in_stock: true } },
});

/** Sets what the MCP server's box offers (PUT /__tools/<box>, test/mcp-servers.ts). */
async function offer(box: string, tools: unknown[]) {
  const response = await fetch(`${mcp.url}/__tools/${box}`, { method: "PUT", body: JSON.stringify({ tools }) });
  expect(response.status).toBe(204);
}

async function partner<T>(path: string, init: { method?: string; body?: unknown } = {}) {
  const response = await callApi(BASE, demo.api_key, path, init);
  const body = await response.text();
  expect(response.ok, `${init.method ?? "GET"} ${path}: ${response.status} ${body}`).toBe(true);
  return JSON.parse(body) as T;
}

/** The description of `name` in the Secretary's context (GET /internal/v1/businesses/{id}/context). */
async function contextDescription(name: string) {
  const response = await fetch(`${BASE}/internal/v1/businesses/${demo.business_id}/context?channel=whatsapp`, {
    headers: { Authorization: `Bearer ${demo.runtime_token}` },
  });
  expect(response.status).toBe(200);
  const { actions } = (await response.json()) as { actions: { name: string; description: string }[] };
  return actions.find((action) => action.name === name)?.description;
}

/** Serious or critical violations of the page as it is, at each viewport: "viewport: rule at element — help". */
async function violations(page: Page, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const viewport of VIEWPORTS) {
    await page.setViewportSize({ width: viewport.width, height: viewport.height });
    const results = await new AxeBuilder({ page }).withTags(TAGS).analyze();
    for (const violation of results.violations) {
      if (!FAILING_IMPACTS.has(violation.impact ?? "")) continue;
      for (const node of violation.nodes) found.push(`${viewport.name}: ${violation.id} at ${node.target.join(" ")}`);
    }
    await page.screenshot({ path: `${SHOTS}/dashboard-mcp-${name}-${viewport.name}.png`, fullPage: true });
  }
  return found;
}

/** Clicks a form's button and waits for the page its answer leads to (the POST, then the 303's GET). */
const submitWith = async (page: Page, button: Locator) => {
  await Promise.all([page.waitForEvent("load"), button.click()]);
};

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  demo = await seed();
  mcp = await startMcpServers();
  stopWorker = await startWorker(PORT);
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await stopWorker?.();
  await mcp?.close();
});

describe("a tool of a partner's MCP server, reviewed by the owner", () => {
  it("keeps the approved description in use until the owner accepts the server's change, shown side by side", async () => {
    const box = `e2e-${unique()}`;
    const name = `stock_${unique()}`;
    await offer(box, [stockTool(name, APPROVED)]);
    const url = `${mcp.url}/${box}/sessions`;
    const server = await partner<{ id: number; tools: { name: string; actionId: number | null }[] }>(
      "/api/v1/mcp-servers",
      { method: "POST", body: { url } },
    );
    const actionId = server.tools.find((tool) => tool.name === name)?.actionId;
    expect(actionId).toEqual(expect.any(Number));

    // A context of its own: axe-core runs its checks in a second page of the page's context.
    const context = await browser.newContext({ viewport: VIEWPORTS[0] });
    const page = await context.newPage();
    await page.goto(`${BASE}/dashboard/sign-in`);
    await page.getByLabel("Email address").fill(demo.owner_email);
    await page.getByLabel("Password").fill(demo.owner_password);
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(page.url()).toBe(`${BASE}/dashboard`);

    // The server under the actions, with its address, who added it, and its tool, which links to its action's page.
    await page.goto(`${BASE}/dashboard/actions`);
    const section = page.getByTestId(`mcp-server-${server.id}`);
    expect(await section.textContent()).toContain(url);
    expect(await section.textContent()).toContain("Added with an API key");
    expect(await section.locator("time").count()).toBe(1);
    expect(await violations(page, "server")).toEqual([]);
    await Promise.all([page.waitForEvent("load"), section.getByRole("link", { name: "Check stock" }).click()]);
    expect(page.url()).toBe(`${BASE}/dashboard/actions/${actionId}`);
    await submitWith(page, page.getByRole("button", { name: "Switch on" }));
    expect(await contextDescription(name)).toBe(APPROVED);

    // The server's tool changes; the partner refreshes the server.
    await offer(box, [stockTool(name, CHANGED)]);
    await partner(`/api/v1/mcp-servers/${server.id}/refresh`, { method: "POST", body: {} });
    expect(await partner<{ changePending: boolean }>(`/api/v1/actions/${actionId}`)).toMatchObject({
      enabled: true,
      changePending: true,
    });

    await page.reload();
    const review = page.getByTestId("action-change");
    expect(await review.textContent()).toContain(`Description: “${APPROVED}” → “${CHANGED}”`);
    expect(await violations(page, "change")).toEqual([]);
    // Until the owner accepts, the Secretary keeps the version the owner approved.
    expect(await contextDescription(name)).toBe(APPROVED);

    await submitWith(page, review.getByRole("button", { name: "Accept the change" }));
    expect(await page.getByTestId("action-change").count()).toBe(0);
    expect(await contextDescription(name)).toBe(CHANGED);
    expect(await partner<{ changePending: boolean }>(`/api/v1/actions/${actionId}`)).toMatchObject({
      enabled: true,
      changePending: false,
    });

    // The tool leaves the server, then a listing fails: the page says both, and offers no Switch on.
    await offer(box, []);
    await partner(`/api/v1/mcp-servers/${server.id}/refresh`, { method: "POST", body: {} });
    await offer(box, [stockTool(name, "x".repeat(17_000))]);
    await partner(`/api/v1/mcp-servers/${server.id}/refresh`, { method: "POST", body: {} });
    expect(await contextDescription(name)).toBeUndefined();
    await page.goto(`${BASE}/dashboard/actions`);
    expect(await page.getByTestId(`list-error-${server.id}`).textContent()).toContain("larger than 16000 bytes");
    expect(await page.getByTestId(`tools-${server.id}`).textContent()).toContain("removed from the server");
    expect(await violations(page, "removed")).toEqual([]);
    await page.goto(`${BASE}/dashboard/actions/${actionId}`);
    expect(await page.getByTestId("tool-removed").isVisible()).toBe(true);
    expect(await page.getByRole("button", { name: "Switch on" }).count()).toBe(0);
    expect(await violations(page, "removed-action")).toEqual([]);
    await context.close();
  });
});
