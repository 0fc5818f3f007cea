import { mkdirSync } from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  callApi,
  eventually,
  FAILING_IMPACTS,
  launchChromium,
  PORTS,
  SHOTS,
  startReceiver,
  startWorker,
  unique,
  VIEWPORTS,
} from "./local-worker";

/**
 * An owner reads an endpoint's deliveries in a real browser (docs/decisions.md, The owner's dashboard), at a phone's
 * and a desktop's size: 60 deliveries paged 20 at a time, newest first, one's payload and the receiver's answer opened,
 * and no serious or critical axe-core violation on the page.
 */
const PORT = PORTS["dashboard-webhooks"];
const BASE = `http://localhost:${PORT}`;
/**
 * The receiver's answer, a 400 (an attempt keeps the start of an answer only when it did not deliver): HTML the page
 * must show as text.
 */
const ANSWER = JSON.stringify({ received: false, note: "<b>not today</b>" });

let browser: Browser;
let stopWorker: () => Promise<void>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
/** A sandbox business of this run (docs/guides/sandbox.md): its test key emits the events, its owner reads them. */
let sandbox: { api_key: string; owner_email: string; owner_password: string };
let endpointId: number;

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  receiver = await startReceiver();
  stopWorker = await startWorker(PORT);
  const made = await fetch(`${BASE}/api/sandbox/businesses`, { method: "POST" });
  expect(made.status).toBe(201);
  sandbox = (await made.json()) as typeof sandbox;
  browser = await launchChromium();
  const box = `owner-history-${unique()}`;
  const created = await callApi(BASE, sandbox.api_key, "/api/v1/webhooks", {
    method: "POST",
    body: { url: `${receiver.url}/${box}/status/400/json/${encodeURIComponent(ANSWER)}`, events: ["booking.created"] },
  });
  expect(created.status).toBe(201);
  endpointId = ((await created.json()) as { id: number }).id;
  // 60 new bookings, emitted as the core platform would report them: one delivery each to the endpoint.
  for (let n = 0; n < 60; n++) {
    const emitted = await callApi(BASE, sandbox.api_key, "/api/v1/sandbox/events", {
      method: "POST",
      body: { event: "booking.created" },
    });
    expect(emitted.status).toBe(201);
  }
  await eventually(async () => receiver.requests.filter((r) => r.url.startsWith(`/${box}/`)).length >= 60, 60_000);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await stopWorker?.();
  await receiver?.stop();
});

async function signIn(page: Page) {
  await page.goto(`${BASE}/dashboard/sign-in`);
  await page.getByLabel("Email address").fill(sandbox.owner_email);
  await page.getByLabel("Password").fill(sandbox.owner_password);
  await Promise.all([page.waitForEvent("load"), page.getByRole("button", { name: "Sign in" }).click()]);
}

const deliveryIds = async (page: Page) =>
  (
    await page.locator('[data-testid^="delivery-"]').evaluateAll((cards) => cards.map((card) => card.dataset.testid))
  ).map((id) => Number(id?.slice("delivery-".length)));

describe.each(VIEWPORTS)("an endpoint's deliveries on a $name screen", (viewport) => {
  it("pages through 60 deliveries, opens one's payload and answer, and passes axe-core", async () => {
    // axe-core works on a page of a context of its own.
    const context = await browser.newContext({ viewport: { width: viewport.width, height: viewport.height } });
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`${BASE}/dashboard/webhooks/${endpointId}`);
    expect(await page.textContent("main")).toContain("Events: new bookings");
    const first = await deliveryIds(page);
    expect(first).toHaveLength(20);
    expect(first).toEqual([...first].sort((a, b) => b - a));
    expect(await page.getByRole("link", { name: "Newer" }).count()).toBe(0);

    // The newest delivery: its payload and its receiver's answer, opened.
    const newest = page.getByTestId(`delivery-${first[0]}`);
    await newest.getByText("Payload", { exact: true }).click();
    const payload = (await newest.getByTestId("payload").textContent()) ?? "";
    expect(payload).toContain("booking.created");
    expect(JSON.parse(payload)).toMatchObject({ id: expect.stringMatching(/^evt_/) });
    await newest.getByText("Answer", { exact: true }).click();
    expect(await newest.getByTestId("answer").textContent()).toBe(ANSWER);
    expect(await newest.locator("b").count()).toBe(0);
    await page.screenshot({ path: `${SHOTS}/dashboard-webhooks-${viewport.name}.png`, fullPage: true });

    const results = await new AxeBuilder({ page }).withTags(["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]).analyze();
    const failing = results.violations
      .filter((violation) => FAILING_IMPACTS.has(violation.impact ?? ""))
      .map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`);
    expect(failing).toEqual([]);

    await Promise.all([page.waitForEvent("load"), page.getByRole("link", { name: "Older" }).click()]);
    const second = await deliveryIds(page);
    expect(second).toHaveLength(20);
    expect(Math.max(...second)).toBeLessThan(Math.min(...first));
    await Promise.all([page.waitForEvent("load"), page.getByRole("link", { name: "Older" }).click()]);
    const third = await deliveryIds(page);
    expect(third.length).toBeGreaterThan(0);
    expect(Math.max(...third)).toBeLessThan(Math.min(...second));
    await Promise.all([page.waitForEvent("load"), page.getByRole("link", { name: "Newer" }).click()]);
    expect(await deliveryIds(page)).toEqual(second);
    await Promise.all([page.waitForEvent("load"), page.getByRole("link", { name: "Newer" }).click()]);
    expect(await deliveryIds(page)).toEqual(first);
    await context.close();
  });
});

describe("a listening session on the owner's Webhooks page", () => {
  it("shows who opened it and since when, and its End button closes the CLI's socket at once", async () => {
    const started = await callApi(BASE, sandbox.api_key, "/api/v1/listen-sessions", { method: "POST", body: {} });
    expect(started.status).toBe(201);
    const session = (await started.json()) as { endpoint_id: number; socket_url: string; connect_token: string };
    // The socket as `secretary listen` opens it: its connect token offered as a subprotocol.
    const socket = new WebSocket(session.socket_url, ["secretary-listen", session.connect_token]);
    await new Promise((resolve, reject) => {
      socket.addEventListener("open", resolve);
      socket.addEventListener("error", reject);
    });
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      socket.addEventListener("close", (event) => resolve({ code: event.code, reason: event.reason })),
    );

    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page);
    await page.goto(`${BASE}/dashboard/webhooks`);
    const row = page.getByTestId(`session-${session.endpoint_id}`);
    expect(await row.textContent()).toMatch(/Opened with the API key Sandbox test key sk_test_sandbox_\S{4}…/);
    expect(await row.textContent()).toMatch(/since \d+ \w+ \d{4}/);
    await Promise.all([page.waitForEvent("load"), row.getByRole("button", { name: "End session" }).click()]);
    expect(await closed).toEqual({ code: 4002, reason: "the business's owner ended this session" });
    expect(await page.textContent("main")).toContain("No listening session is open.");
    await context.close();
  });
});
