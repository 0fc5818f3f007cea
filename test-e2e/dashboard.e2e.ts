import { mkdirSync } from "node:fs";
import type { Browser, Locator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardSegment } from "../src/db/shards.ts";
import {
  callApi,
  eventually,
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
} from "./local-worker";

/**
 * The owner's dashboard in a real browser (Debian's Chromium driven by playwright-core) against a real `wrangler dev`
 * of the project, with the effect of each owner task checked through the partner API. A screenshot of every page
 * goes to test-artifacts/screenshots (git-ignored). The tests run in order and share the signed-in browser.
 */
const PORT = PORTS.dashboard;
const BASE = `http://localhost:${PORT}`;

let browser: Browser;
let page: Page;
let stopWorker: () => Promise<void>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let demo: Seeded;

const api = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
  callApi(BASE, init.token ?? demo.api_key, path, init);

const apiJson = async <T = Record<string, unknown>>(path: string, init: Parameters<typeof api>[1] = {}) =>
  (await (await api(path, init)).json()) as T;

const shot = (name: string) => page.screenshot({ path: `${SHOTS}/${name}.png`, fullPage: true });

/** An authorization request with PKCE S256 of a public client: its query, and the verifier the exchange sends. */
async function pkceAuthorization(params: Record<string, string>) {
  const verifier = `${unique()}${"v".repeat(50)}`;
  const challenge = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))).toString(
    "base64url",
  );
  const query = new URLSearchParams({
    response_type: "code",
    ...params,
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  return { query, verifier };
}

/** The owner approves on the page open; the code the receiver got at `redirectUri` is exchanged for tokens. */
async function approvedTokens(clientId: string, redirectUri: string, verifier: string) {
  await page.getByRole("button", { name: /approve/i }).click();
  const path = `${new URL(redirectUri).pathname}?`;
  await eventually(async () => receiver.requests.some((r) => r.url.startsWith(path)));
  const back = new URL(receiver.requests.find((r) => r.url.startsWith(path))?.url ?? "", receiver.url);
  const response = await fetch(`${BASE}/api/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({
      grant_type: "authorization_code",
      code: back.searchParams.get("code") ?? "",
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: clientId,
    }),
  });
  return (await response.json()) as { access_token: string };
}
const text = async () => (await page.textContent("main")) ?? "";
/**
 * Clicks a form's button and waits for the page its answer leads to (the POST, then the 303's GET), so that a reload
 * right after cannot land in the middle of that navigation.
 */
const submitWith = async (button: Locator) => {
  await Promise.all([page.waitForEvent("load"), button.click()]);
};

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  demo = await seed();
  receiver = await startReceiver();
  stopWorker = await startWorker(PORT);
  browser = await launchChromium();
  // A phone-sized screen: the layout must work there.
  page = await browser.newPage({ viewport: { width: 390, height: 844 } });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stopWorker?.();
  await receiver?.stop();
});

describe("the business owner's dashboard", () => {
  it("signs the owner in with a secure session cookie, and shows the plan", async () => {
    await page.goto(`${BASE}/dashboard`);
    expect(page.url()).toBe(`${BASE}/dashboard/sign-in`);
    await shot("sign-in");
    await page.getByLabel("Email address").fill(demo.owner_email);
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(await page.getByRole("alert").textContent()).toBe("The email address or password is not correct.");
    await page.getByLabel("Email address").fill(demo.owner_email);
    await page.getByLabel("Password").fill(demo.owner_password);
    await page.getByRole("button", { name: "Sign in" }).click();
    expect(page.url()).toBe(`${BASE}/dashboard`);
    expect(await text()).toContain("Pro");
    const cookie = (await page.context().cookies()).find((c) => c.name === "__Host-owner_session");
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: "Lax", path: "/" });
    await shot("overview");
  });

  it("refuses a form posted without the CSRF token, or from another origin", async () => {
    const cookie = (await page.context().cookies()).find((c) => c.name === "__Host-owner_session");
    const headers = {
      Cookie: `__Host-owner_session=${cookie?.value}`,
      "Content-Type": "application/x-www-form-urlencoded",
    };
    const withoutToken = await fetch(`${BASE}/dashboard/keys`, {
      method: "POST",
      headers,
      body: "label=forged",
      redirect: "manual",
    });
    expect(withoutToken.status).toBe(403);
    const csrf = await page.locator('input[name="csrf_token"]').first().getAttribute("value");
    const crossSite = await fetch(`${BASE}/dashboard/keys`, {
      method: "POST",
      headers: { ...headers, Origin: "https://evil.example" },
      body: `label=forged&csrf_token=${csrf}`,
      redirect: "manual",
    });
    expect(crossSite.status).toBe(403);
    const keys = await (await fetch(`${BASE}/dashboard/keys`, { headers })).text();
    expect(keys).not.toContain("forged");
  });

  it("creates a key, shown once, that works; revoking it makes it fail", async () => {
    await page.goto(`${BASE}/dashboard/keys`);
    const label = `E2E ${unique()}`;
    await page.getByLabel("Name (who will use it)").fill(label);
    await page.getByRole("button", { name: "Create key" }).click();
    const key = (await page.getByTestId("new-key").textContent())?.trim() ?? "";
    // The key names the business's shard (docs/scaling.md, How a request finds its shard).
    expect(key).toMatch(new RegExp(`^sk_live_${shardSegment(demo.shard)}[A-Za-z0-9_-]{43}$`));
    await shot("keys");
    expect((await api("/api/v1/me", { token: key })).status).toBe(200);
    // docs/architecture.md, What happens when access ends: the owner first sees what will stop and what remains.
    await page.getByRole("link", { name: `Revoke ${label}` }).click();
    expect(page.url()).toMatch(/\/dashboard\/keys\/\d+\/revoke$/);
    expect((await api("/api/v1/me", { token: key })).status).toBe(200);
    const stops = (await page.getByTestId("stops").textContent()) ?? "";
    expect(stops).toContain("Every request made with this key is refused");
    // The seeded key stays active: the endpoints created with API keys keep receiving.
    expect(stops).toMatch(
      /\d+ other active keys? remains?: the webhook endpoints created with API keys keep receiving/,
    );
    await shot("key-revoke-confirmation");
    await page.getByRole("button", { name: "Revoke the key" }).click();
    expect(page.url()).toBe(`${BASE}/dashboard/keys`);
    expect((await api("/api/v1/me", { token: key })).status).toBe(401);
    await page.goto(`${BASE}/dashboard/keys`);
    expect(await page.getByTestId("new-key").count()).toBe(0);
  });

  it("approves an intake after reading its approval screen, then shows a PATCH's change list", async () => {
    const created = await apiJson<{ id: number }>("/api/v1/intakes", {
      method: "POST",
      body: sampleIntake(),
    });
    await page.goto(`${BASE}/dashboard/intakes/${created.id}`);
    const approval = (await page.getByTestId("approval").textContent()) ?? "";
    expect(approval).toContain("What is your full name?");
    expect(approval).toContain("Email address: “Which email should we use?”");
    expect(approval).toContain("asks for the customer's full name");
    await shot("intake-approval");
    await page.getByRole("button", { name: "Approve and switch on" }).click();
    expect((await apiJson<{ enabled: boolean }>(`/api/v1/intakes/${created.id}`)).enabled).toBe(true);

    const patched = await api(`/api/v1/intakes/${created.id}`, {
      method: "PATCH",
      body: {
        fields: [
          { id: "full_name", label: "What is your full name?", type: "text", required: true },
          { id: "phone", label: "Your mobile number?", type: "phone", required: true },
          { id: "email", label: "Which email should we use?", type: "email", required: true },
        ],
      },
    });
    expect(((await patched.json()) as { enabled: boolean }).enabled).toBe(false);
    await page.goto(`${BASE}/dashboard/intakes/${created.id}`);
    const changes = (await page.getByTestId("changes").textContent()) ?? "";
    expect(changes).toContain("Added question 2: “Your mobile number?”");
    expect(changes).toContain("Removed question “Your hair type?”");
    await shot("intake-changes");
    await page.goto(`${BASE}/dashboard/intakes`);
    await shot("intakes");
  });

  it("switches an action on after a Test", async () => {
    const created = await apiJson<{ id: number }>("/api/v1/actions", {
      method: "POST",
      body: sampleAction(receiver.url),
    });
    await page.goto(`${BASE}/dashboard/actions/${created.id}`);
    await page.getByLabel("Product code").fill("SHAMPOO-1");
    await page.getByRole("button", { name: "Test" }).click();
    const result = (await page.getByTestId("test-result").textContent()) ?? "";
    expect(result).toContain("success");
    expect(result).toContain("in_stock");
    expect(receiver.requests.some((r) => r.url === "/stock" && JSON.parse(r.body).arguments.sku === "SHAMPOO-1")).toBe(
      true,
    );
    await shot("action-test");
    await page.getByRole("button", { name: "Switch on" }).click();
    const action = await apiJson<{ enabled: boolean; calls: Array<{ status: string }> }>(
      `/api/v1/actions/${created.id}`,
    );
    expect(action.enabled).toBe(true);
    expect(action.calls[0]?.status).toBe("success");
    await page.goto(`${BASE}/dashboard/actions`);
    await shot("actions");
  });

  it("shows a partner's change of a switched-on action and accepts it", async () => {
    const created = await apiJson<{ id: number; name: string }>("/api/v1/actions", {
      method: "POST",
      body: sampleAction(receiver.url),
    });
    await page.goto(`${BASE}/dashboard/actions/${created.id}`);
    await submitWith(page.getByRole("button", { name: "Switch on" }));
    const changed = await apiJson<{ enabled: boolean; changePending: boolean }>(`/api/v1/actions/${created.id}`, {
      method: "PATCH",
      body: {
        parameters: {
          type: "object",
          properties: {
            sku: { type: "string", description: "Product code" },
            customer_name: { type: "string", description: "The customer's full name" },
          },
          required: ["sku"],
        },
      },
    });
    expect(changed).toMatchObject({ enabled: true, changePending: true });
    await page.goto(`${BASE}/dashboard/actions/${created.id}`);
    const review = (await page.getByTestId("action-change").textContent()) ?? "";
    expect(review).toContain("New parameter “customer_name”");
    expect(review).toContain("asks for the customer's full name");
    await shot("action-change");
    await submitWith(page.getByRole("button", { name: "Accept the change" }));
    expect(await page.getByTestId("action-change").count()).toBe(0);
    const accepted = await apiJson<{ enabled: boolean; changePending: boolean }>(`/api/v1/actions/${created.id}`);
    expect(accepted).toMatchObject({ enabled: true, changePending: false });
  });

  it("sends a ping and shows it delivered in the endpoint's history", async () => {
    const endpoint = await apiJson<{ id: number }>("/api/v1/webhooks", {
      method: "POST",
      body: { url: `${receiver.url}/hooks`, events: ["booking.created"] },
    });
    await page.goto(`${BASE}/dashboard/webhooks/${endpoint.id}`);
    await submitWith(page.getByRole("button", { name: "Send a test event" }));
    await eventually(async () =>
      receiver.requests.some((r) => r.url === "/hooks" && r.headers["x-service-event"] === "ping"),
    );
    await eventually(async () => {
      await page.reload();
      return ((await page.getByTestId("deliveries").textContent()) ?? "").includes("delivered");
    });
    expect(await page.getByTestId("deliveries").textContent()).toContain("ping");
    await shot("webhook-history");
    await page.goto(`${BASE}/dashboard/webhooks`);
    await shot("webhooks");
  });

  it("sends a delivery again, then removes the endpoint after its confirmation", async () => {
    const endpoint = await apiJson<{ id: number }>("/api/v1/webhooks", {
      method: "POST",
      body: { url: `${receiver.url}/again`, events: ["booking.created"] },
    });
    const pings = () => receiver.requests.filter((r) => r.url === "/again" && r.headers["x-service-event"] === "ping");
    await page.goto(`${BASE}/dashboard/webhooks/${endpoint.id}`);
    await submitWith(page.getByRole("button", { name: "Send a test event" }));
    await eventually(async () => pings().length === 1);
    const eventId = JSON.parse(pings()[0]?.body ?? "{}").id;

    await submitWith(page.getByTestId("deliveries").getByRole("button", { name: "Send again" }).first());
    expect(page.url()).toBe(`${BASE}/dashboard/webhooks/${endpoint.id}`);
    // One more attempt of the same delivery, through the queue to the receiver, in that delivery's history.
    await eventually(async () => pings().length === 2);
    expect(JSON.parse(pings()[1]?.body ?? "{}").id).toBe(eventId);
    expect(pings()[1]?.headers["x-service-delivery"]).toBe(pings()[0]?.headers["x-service-delivery"]);
    await eventually(async () => {
      await page.reload();
      const deliveries = (await page.getByTestId("deliveries").textContent()) ?? "";
      return (deliveries.match(/: 200 \(/g) ?? []).length === 2;
    });
    await shot("webhook-send-again");

    await page.getByRole("link", { name: "Remove this endpoint" }).click();
    expect(await page.getByTestId("stops").textContent()).toContain("No delivery is waiting to be sent to it.");
    expect(await text()).toContain(`${receiver.url}/again`);
    await shot("webhook-remove-confirmation");
    await page.getByRole("button", { name: "Remove the endpoint" }).click();
    expect(page.url()).toBe(`${BASE}/dashboard/webhooks`);
    expect(await text()).not.toContain(`${receiver.url}/again`);
    const left = await apiJson<{ data: Array<{ id: number }> }>("/api/v1/webhooks");
    expect(left.data.map((item) => item.id)).not.toContain(endpoint.id);
  });

  it("removes an action after its confirmation", async () => {
    const created = await apiJson<{ id: number; name: string }>("/api/v1/actions", {
      method: "POST",
      body: {
        name: `remove_${unique()}`,
        title: "Old price list",
        description: "Tells the price of a hair product, from a list that is no longer kept.",
        url: `${receiver.url}/prices`,
      },
    });
    await page.goto(`${BASE}/dashboard/actions/${created.id}`);
    await page.getByRole("link", { name: "Remove this action" }).click();
    expect(await page.getByTestId("stops").textContent()).toContain("The Secretary no longer calls it");
    await shot("action-remove-confirmation");
    await page.getByRole("button", { name: "Remove the action" }).click();
    expect(page.url()).toBe(`${BASE}/dashboard/actions`);
    expect(await text()).not.toContain(created.name);
    expect((await api(`/api/v1/actions/${created.id}`)).status).toBe(404);
  });

  it("removes a text pushed by an app", async () => {
    const key = `e2e-${unique()}`;
    const pushed = await api(`/api/v1/knowledge/${key}`, {
      method: "PUT",
      body: { title: "Holiday hours", content: "Closed from 24 to 26 December, open again on the 27th." },
    });
    expect([200, 201, 403]).toContain(pushed.status);
    if (pushed.status === 403) {
      // The demo business is at its source limit: make room with the partner API, then push.
      const listed = await apiJson<{ data: Array<{ key: string }> }>("/api/v1/knowledge");
      for (const item of listed.data) await api(`/api/v1/knowledge/${item.key}`, { method: "DELETE" });
      expect(
        (
          await api(`/api/v1/knowledge/${key}`, {
            method: "PUT",
            body: { title: "Holiday hours", content: "Closed from 24 to 26 December." },
          })
        ).status,
      ).toBe(201);
    }
    await page.goto(`${BASE}/dashboard/knowledge`);
    expect(await text()).toContain("Added by a connected app");
    await shot("knowledge");
    await page.getByRole("button", { name: `Remove ${key}` }).click();
    const listed = await apiJson<{ data: Array<{ key: string }> }>("/api/v1/knowledge");
    expect(listed.data.map((item) => item.key)).not.toContain(key);
  });

  it("disconnects an app: its token stops working at once", async () => {
    const client = (await (
      await fetch(`${BASE}/api/oauth/register`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          client_name: "E2E Booking Tool",
          redirect_uris: [`${receiver.url}/callback`],
          token_endpoint_auth_method: "none",
        }),
      })
    ).json()) as { client_id: string };
    const { query, verifier } = await pkceAuthorization({
      client_id: client.client_id,
      redirect_uri: `${receiver.url}/callback`,
      scope: "api",
      state: "e2e-state",
    });
    await page.goto(`${BASE}/oauth/authorize?${query}`);
    await shot("consent");
    const tokens = await approvedTokens(client.client_id, `${receiver.url}/callback`, verifier);
    expect((await api("/api/v1/me", { token: tokens.access_token })).status).toBe(200);
    // What the app added: an endpoint (deleted with the disconnection) and a text (kept, marked).
    const hooks = `${receiver.url}/app-hooks`;
    const endpoint = await apiJson<{ id: number }>("/api/v1/webhooks", {
      method: "POST",
      token: tokens.access_token,
      body: { url: hooks },
    });
    expect(endpoint.id).toBeGreaterThan(0);
    const pushed = await api("/api/v1/knowledge/app-notes", {
      method: "PUT",
      token: tokens.access_token,
      body: { title: "Notes from the booking tool", content: "Bookings for colour need a patch test 48 hours before." },
    });
    expect([201, 403]).toContain(pushed.status);

    await page.goto(`${BASE}/dashboard/apps`);
    expect(await text()).toContain("E2E Booking Tool");
    await shot("apps");
    await page.getByRole("link", { name: "Disconnect E2E Booking Tool" }).click();
    expect((await api("/api/v1/me", { token: tokens.access_token })).status).toBe(200);
    const stops = (await page.getByTestId("stops").textContent()) ?? "";
    expect(stops).toContain("every token it holds is refused");
    expect(stops).toContain(hooks);
    expect(await page.getByTestId("remains").textContent()).toContain("marked as from a disconnected app");
    await shot("app-disconnect-confirmation");
    await page.getByRole("button", { name: "Disconnect E2E Booking Tool" }).click();
    expect(page.url()).toBe(`${BASE}/dashboard/apps`);
    expect((await api("/api/v1/me", { token: tokens.access_token })).status).toBe(401);
    await page.goto(`${BASE}/dashboard/webhooks`);
    expect(await text()).not.toContain(hooks);
    if (pushed.status === 201) {
      await page.goto(`${BASE}/dashboard/knowledge`);
      expect(await text()).toContain("disconnected app");
    }
  });

  it("connects an app known by its metadata document: the owner sees its name and host, and its token works", async () => {
    // docs/oauth.md, Client ID metadata documents: the client_id is the URL of the app's document, which the receiver
    // serves (test/receiver.ts, cimd), loopback http being allowed in local development.
    const callback = `${receiver.url}/assistant-callback`;
    const document = { client_name: "E2E Assistant", redirect_uris: [callback], token_endpoint_auth_method: "none" };
    const clientId = `${receiver.url}/doc/cimd/max-age%3D600/${encodeURIComponent(JSON.stringify(document))}`;
    const { query, verifier } = await pkceAuthorization({
      client_id: clientId,
      redirect_uri: callback,
      state: "e2e-document",
    });
    await page.goto(`${BASE}/oauth/authorize?${query}`);
    const host = new URL(receiver.url).host;
    expect(await text()).toContain(`E2E Assistant (as it names itself) from ${host} will be able to:`);
    await shot("consent-metadata-document");
    const tokens = await approvedTokens(clientId, callback, verifier);
    expect((await api("/api/v1/me", { token: tokens.access_token })).status).toBe(200);
    // Read once, for the consent page; the approval and the token request used the reading kept.
    expect(receiver.requests.filter((r) => r.url.startsWith("/doc/cimd/"))).toHaveLength(1);
    await page.goto(`${BASE}/dashboard/apps`);
    expect(await text()).toContain(`E2E Assistant (as it names itself) from ${host}`);
  });

  it("shows on the overview what needs the owner", async () => {
    await page.goto(`${BASE}/dashboard`);
    // The intake a PATCH switched off, above, waits for the owner again.
    expect(await page.getByTestId("waiting").textContent()).toContain("changed by the partner since you approved it");
    expect(await page.getByTestId("credentials").textContent()).toContain("Last used:");
    expect(await page.getByTestId("knowledge-use").textContent()).toMatch(/\d+ of \d+ sources used/);
    await shot("overview-needs");
  });

  it("signs out", async () => {
    await page.goto(`${BASE}/dashboard`);
    // On a phone the navigation, Sign out with it, is folded behind Menu.
    await page.locator("summary", { hasText: "Menu" }).click();
    await page.getByRole("button", { name: "Sign out" }).click();
    expect(page.url()).toBe(`${BASE}/dashboard/sign-in`);
    await page.goto(`${BASE}/dashboard/keys`);
    expect(page.url()).toBe(`${BASE}/dashboard/sign-in`);
  });
});
