import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { businessNameFor } from "../scripts/seed.ts";
import { verifyStandardWebhook, verifyWebhookSignature } from "../test/helpers/verify-signature.ts";
import { callApi, eventually, PORTS, type Seeded, seed, seedMore, spawned, startWorker } from "./local-worker.ts";

// docs/guides/webhooks.md, Listening from a laptop: `secretary listen --forward-to` and `secretary trigger`, run as a
// partner runs them, against a real `wrangler dev`, forwarding to a local HTTP server (docs/decisions.md, Listening
// from a laptop).

const PORT = PORTS.cli;
const BASE = `http://localhost:${PORT}`;

type Received = { headers: Record<string, string>; body: string; at: number };

/** The partner's local server: every request kept, each answered 200. */
async function startLocalServer() {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));
      received.push({ headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      response.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, received, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks` };
}

/** The CLI as `npx secretary …` runs it (its package's "bin", built by `npm install`), with its output kept. */
const secretary = (args: string[], apiKey: string, apiBase = BASE) =>
  spawned(process.execPath, ["cli/dist/secretary.js", ...args, "--api-base", apiBase, "--api-key", apiKey]);

let stopWorker: (() => Promise<void>) | undefined;
let local: Awaited<ReturnType<typeof startLocalServer>>;
let apiKey: string;
let listener: ChildProcess | undefined;
/** Live businesses for the app to be connected to: one in eu1, two in us1. */
let shops: Seeded[];

beforeAll(async () => {
  await seed();
  shops = await seedMore([
    { handle: "lisbon-listen", country: "PT" },
    { handle: "austin-listen", country: "US" },
    { handle: "boston-listen", country: "US" },
  ]);
  stopWorker = await startWorker(PORT);
  local = await startLocalServer();
  const created = await fetch(`${BASE}/api/sandbox/businesses`, { method: "POST" });
  expect(created.status).toBe(201);
  apiKey = ((await created.json()) as { api_key: string }).api_key;
  expect(apiKey).toMatch(/^sk_test_/);
});

afterAll(async () => {
  listener?.kill("SIGKILL");
  await new Promise((resolve) => (local?.server as Server | undefined)?.close(resolve));
  await stopWorker?.();
});

describe("secretary listen and trigger", () => {
  it("keeps its connection with pings, forwards a triggered event to the local server, signed, and stops when the CLI stops", async () => {
    // A ping every 0.2 s: without the session's pong the CLI would give the connection up after three, 0.8 s.
    const listen = secretary(["listen", "--forward-to", local.url, "--keepalive", "0.2", "--print-secret"], apiKey);
    listener = listen.child;
    await eventually(async () => listen.output.stdout.includes("Ready."), 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(listen.child.exitCode).toBeNull();
    expect(listen.output.stderr).toBe("");
    const secret = /signing secret is (whsec_\S+)/.exec(listen.output.stdout)?.[1] ?? "";
    const endpointId = /webhooks\/(\d+)\/deliveries/.exec(listen.output.stdout)?.[1];
    expect(secret).toMatch(/^whsec_/);

    const triggeredAt = Date.now();
    const first = secretary(["trigger", "booking.created"], apiKey);
    expect(await first.exited).toBe(0);
    const [, eventId] = /Triggered booking\.created: (evt_\S+)/.exec(first.output.stdout) ?? [];
    expect(eventId).toBeDefined();

    await eventually(async () => local.received.length === 1, 20_000);
    const [delivery] = local.received as [Received];
    expect(delivery.headers["x-service-event"]).toBe("booking.created");
    expect(delivery.headers["webhook-id"]).toBe(eventId);
    expect(JSON.parse(delivery.body)).toMatchObject({ id: eventId, event: "booking.created" });
    expect(await verifyWebhookSignature(delivery.body, delivery.headers["x-service-signature"] ?? "", secret)).toBe(
      true,
    );
    expect(await verifyStandardWebhook(delivery.body, new Headers(delivery.headers), secret)).toBe(true);

    // The CLI's line, and the attempt as the service recorded it.
    const line = /^\S+Z {2}--> booking\.created \[dlv (\d+)\] 200$/m;
    await eventually(async () => line.test(listen.output.stdout));
    const deliveryId = Number(line.exec(listen.output.stdout)?.[1]);
    type Deliveries = {
      data: Array<{ id: number; status: string; attempts: Array<{ status_code: number; duration_ms: number }> }>;
    };
    let recorded: Deliveries["data"][number] | undefined;
    await eventually(async () => {
      const listed = await callApi(BASE, apiKey, `/api/v1/webhooks/${endpointId}/deliveries`);
      recorded = ((await listed.json()) as Deliveries).data.find(({ id }) => id === deliveryId);
      return recorded?.status === "delivered";
    });
    expect(recorded?.attempts).toEqual([expect.objectContaining({ status_code: 200 })]);
    console.log(
      `relay: trigger started (a Node process) → local server ${delivery.at - triggeredAt} ms; attempt (socket round trip and forward) ${recorded?.attempts[0]?.duration_ms} ms`,
    );

    // ^C: the socket closes, the session ends, and its endpoint with it.
    listen.child.kill("SIGINT");
    expect(await listen.exited).toBe(0);
    await eventually(
      async () => (await callApi(BASE, apiKey, `/api/v1/webhooks/${endpointId}/deliveries`)).status === 404,
    );
    // With no endpoint left, an event writes no delivery (deliveries are written with their event), so nothing can
    // reach the local server later: no wait is needed to see that nothing arrives.
    const endpoints = await callApi(BASE, apiKey, "/api/v1/webhooks");
    expect(((await endpoints.json()) as { data: unknown[] }).data).toEqual([]);
    const second = secretary(["trigger", "booking.created"], apiKey);
    expect(await second.exited).toBe(0);
    expect(local.received).toHaveLength(1);
  });

  it("prints the server's sentence and exits 1 when trigger is refused", async () => {
    const refused = secretary(["trigger", "intake.completed"], apiKey);
    expect(await refused.exited).toBe(1);
    expect(refused.output.stderr.trim()).toMatch(/\S/);
    const wrongKey = secretary(["trigger", "booking.created"], "sk_live_wrong");
    expect(await wrongKey.exited).toBe(1);
    expect(wrongKey.output.stderr).toMatch(/API key/);
  });

  it("names the address it could not reach and what to do, when nothing answers there", async () => {
    const closed = createServer();
    closed.listen(0, "127.0.0.1");
    await once(closed, "listening");
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const nowhere = secretary(["trigger", "booking.created"], apiKey, `http://127.0.0.1:${port}`);
    expect(await nowhere.exited).toBe(1);
    expect(nowhere.output.stderr.trim()).toBe(
      `Could not connect to the API at http://127.0.0.1:${port} (ECONNREFUSED). Start the service (npm start in the project), or give its address with --api-base <url> or SECRETARY_API_BASE.`,
    );
  });
});

/** The owner of `shop` approves the client on the authorization pages, as a browser would, cookies and all. */
async function approve(shop: Seeded, clientId: string, redirectUri: string) {
  const cookies = new Map<string, string>();
  const browse = async (path: string, form?: Record<string, string>) => {
    const headers: Record<string, string> = {
      Cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "),
    };
    if (form) Object.assign(headers, { Origin: BASE, "Content-Type": "application/x-www-form-urlencoded" });
    const response = await fetch(`${BASE}${path}`, {
      method: form ? "POST" : "GET",
      headers,
      body: form && new URLSearchParams(form),
      redirect: "manual",
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      cookies.set(pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1));
    }
    return response;
  };
  const csrf = async (response: Response) => /name="csrf_token" value="([^"]+)"/.exec(await response.text())?.[1] ?? "";
  const verifier = "v".repeat(64);
  const challenge = Buffer.from(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier))).toString(
    "base64url",
  );
  const query = new URLSearchParams({
    response_type: "code",
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: "api",
    state: "e2e",
    code_challenge: challenge,
    code_challenge_method: "S256",
  });
  const signInPage = await browse(`/oauth/authorize?${query}`);
  const form = { csrf_token: await csrf(signInPage), email: shop.owner_email, password: shop.owner_password };
  const signedIn = await browse(`/oauth/authorize/sign-in?${query}`, form);
  expect(signedIn.status).toBe(303);
  const consent = await browse(signedIn.headers.get("Location") ?? "");
  const decided = await browse(`/oauth/authorize?${query}`, { csrf_token: await csrf(consent), decision: "approve" });
  expect(decided.status).toBe(303);
  expect(decided.headers.get("Location")).toMatch(/[?&]code=/);
}

/** The core platform reports a new booking of the business (`POST /internal/v1/businesses/{id}/events`). */
async function reportBooking(shop: Seeded, id: number) {
  const { $comment: _, ...sample } = JSON.parse(readFileSync("test/fixtures/booking.json", "utf8"));
  const response = await fetch(`${BASE}/internal/v1/businesses/${shop.business_id}/events`, {
    method: "POST",
    headers: { Authorization: `Bearer ${shop.runtime_token}`, "Content-Type": "application/json" },
    body: JSON.stringify({ booking: { ...sample, id } }),
  });
  expect(response.status).toBe(201);
}

describe("secretary listen --app", () => {
  it("forwards every connected business's events, in eu1 and us1, each line naming its business, and ends the app's session on ^C", async () => {
    const [lisbon, austin, boston] = shops as [Seeded, Seeded, Seeded];
    expect([lisbon.shard, austin.shard, boston.shard]).toEqual(["eu1", "us1", "us1"]);
    const redirectUri = `${new URL(local.url).origin}/callback`;
    const registered = await fetch(`${BASE}/api/oauth/register`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ client_name: "E2E Booking Platform", redirect_uris: [redirectUri] }),
    });
    expect(registered.status).toBe(201);
    const client = (await registered.json()) as { client_id: string; client_secret: string };
    await approve(lisbon, client.client_id, redirectUri);
    await approve(austin, client.client_id, redirectUri);

    const credentials = { SECRETARY_CLIENT_ID: client.client_id, SECRETARY_CLIENT_SECRET: client.client_secret };
    const wrong = spawned(process.execPath, ["cli/dist/secretary.js", "listen", "--app", "--forward-to", local.url], {
      env: { ...credentials, SECRETARY_CLIENT_SECRET: "wrong", SECRETARY_API_BASE: BASE },
    });
    expect(await wrong.exited).toBe(1);
    expect(wrong.output.stderr.trim()).toBe("The client secret is not correct.");

    const before = local.received.length;
    const listen = spawned(process.execPath, ["cli/dist/secretary.js", "listen", "--app", "--forward-to", local.url], {
      env: { ...credentials, SECRETARY_API_BASE: BASE },
    });
    listener = listen.child;
    await eventually(async () => listen.output.stdout.includes("Ready."), 20_000);
    expect(listen.output.stdout).toMatch(
      /Forwarding every connected business's events to .*app\/webhooks\/\d+\/deliveries/,
    );
    // A business connected while the session lasts reaches it too.
    await approve(boston, client.client_id, redirectUri);
    for (const [index, shop] of [lisbon, austin, boston].entries()) await reportBooking(shop, 970_001 + index);

    for (const shop of [lisbon, austin, boston]) {
      const line = new RegExp(
        `--> booking\\.created \\[dlv \\d+\\] 200  ${businessNameFor(shop.handle)} \\(${shop.handle}\\)$`,
        "m",
      );
      await eventually(async () => line.test(listen.output.stdout), 20_000);
    }
    const forwarded = local.received.slice(before).map((request) => JSON.parse(request.body));
    const booked = forwarded.filter((envelope) => envelope.event === "booking.created");
    expect(booked.map((envelope) => envelope.business.id).sort()).toEqual(
      [lisbon, austin, boston].map((shop) => shop.business_id).sort(),
    );

    // ^C: the socket closes, and the session's app endpoint goes with every business's copy.
    listen.child.kill("SIGINT");
    expect(await listen.exited).toBe(0);
    const token = await fetch(`${BASE}/api/oauth/token`, {
      method: "POST",
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Authorization: `Basic ${btoa(`${client.client_id}:${client.client_secret}`)}`,
      },
      body: new URLSearchParams({ grant_type: "client_credentials", scope: "app" }),
    });
    const { access_token } = (await token.json()) as { access_token: string };
    await eventually(async () => {
      const endpoints = await callApi(BASE, access_token, "/api/v1/app/webhooks");
      return ((await endpoints.json()) as { data: unknown[] }).data.length === 0;
    });
    const received = local.received.length;
    await reportBooking(lisbon, 970_010);
    expect(local.received).toHaveLength(received);
  });
});
