import type { ChildProcess } from "node:child_process";
import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyStandardWebhook, verifyWebhookSignature } from "../test/helpers/verify-signature.ts";
import { callApi, eventually, PORTS, seed, spawned, startWorker } from "./local-worker.ts";

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

beforeAll(async () => {
  await seed();
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
