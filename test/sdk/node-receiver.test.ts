import { once } from "node:events";
import { mkdirSync, writeFileSync } from "node:fs";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import guide from "../../docs/guides/webhooks.md?raw";
import { newSigningSecret, signatureHeaders } from "../../src/lib/signing";

/*
 * docs/guides/webhooks.md, A node:http receiver: the guide's server, taken from the guide as a partner pastes it,
 * runs in Node on a free port and receives deliveries signed by the service's own signing (src/lib/signing.ts): it
 * verifies the raw body with the SDK's verifyWebhook, and refuses a changed body or a stale timestamp with the reason.
 */

const block = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)]
  .map(([, code]) => code ?? "")
  .find((code) => code.includes('from "node:http"'));
const secret = newSigningSecret();
const envelope = JSON.stringify({
  id: "evt_node_receiver",
  event: "booking.created",
  created_at: "2026-11-22T09:30:00.000Z",
  business: { id: "6f1c2d3e-0000-4000-8000-000000000001", handle: "bella-hair", name: "Bella Hair Studio — Café" },
  data: { booking: { id: 4812, status: "confirmed" } },
});

let server: Server;
let url: string;
/** The guide's handler logs each event it accepts: kept here, to be asserted rather than printed. */
const logged = vi.spyOn(console, "log").mockImplementation(() => {});

beforeAll(async () => {
  expect(block, "docs/guides/webhooks.md has a node:http receiver").toBeDefined();
  // The example imports the SDK by its package name, as a partner's code does; here that is the package in sdk/.
  const directory = join(dirname(fileURLToPath(import.meta.url)), "../../test-artifacts/guides");
  mkdirSync(directory, { recursive: true });
  const file = join(directory, "node-receiver.ts");
  writeFileSync(file, block ?? "");
  process.env.PORT = "0";
  process.env.SECRETARY_WEBHOOK_SECRET = secret;
  ({ server } = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as { server: Server });
  if (!server.listening) await once(server, "listening");
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
});

afterAll(async () => {
  logged.mockRestore();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function deliver(body: string, headers: Record<string, string>) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body,
  });
  return { status: response.status, text: await response.text() };
}

const now = () => Math.floor(Date.now() / 1000);

describe("the guide's node:http receiver", () => {
  it("answers 204 to a delivery signed with its secret, read as raw bytes", async () => {
    const headers = await signatureHeaders([secret], "evt_node_receiver", envelope, now());
    logged.mockClear();
    expect(await deliver(envelope, headers)).toEqual({ status: 204, text: "" });
    expect(logged).toHaveBeenCalledWith("received booking.created evt_node_receiver");
  });

  it("answers 204 during a rotation, with the new and the previous secret's signatures", async () => {
    const headers = await signatureHeaders([newSigningSecret(), secret], "evt_node_receiver", envelope, now());
    await expect(await deliver(envelope, headers)).toHaveStatus(204);
  });

  it("refuses a body changed after signing, a body parsed and written again, and another secret's signature", async () => {
    const headers = await signatureHeaders([secret], "evt_node_receiver", envelope, now());
    const refused = { status: 400, text: "no_matching_signature" };
    expect(await deliver(envelope.replace("4812", "4813"), headers)).toEqual(refused);
    expect(await deliver(JSON.stringify(JSON.parse(envelope), null, 2), headers)).toEqual(refused);
    const other = await signatureHeaders([newSigningSecret()], "evt_node_receiver", envelope, now());
    expect(await deliver(envelope, other)).toEqual(refused);
  });

  it("refuses a delivery signed more than 300 seconds ago, and one without signatures", async () => {
    const stale = await signatureHeaders([secret], "evt_node_receiver", envelope, now() - 301);
    expect(await deliver(envelope, stale)).toEqual({ status: 400, text: "timestamp_outside_tolerance" });
    expect(await deliver(envelope, {})).toEqual({ status: 400, text: "missing_headers" });
  });

  it("answers 404 elsewhere", async () => {
    await expect(await fetch(url.replace("/webhooks", "/other"), { method: "POST" })).toHaveStatus(404);
  });
});
