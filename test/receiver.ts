import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { RecordedRequest } from "./recorded-request";

/**
 * The one HTTP receiver of the project, on 127.0.0.1 (a free port), for outbound calls (webhook deliveries, action
 * calls, OAuth redirects): vitest's global setup (test/global-setup.ts), the browser tests (test-e2e/local-worker.ts),
 * the soak and the bench (scripts/soak.ts, scripts/bench.ts). Each test uses its own path prefix (a "box"); the
 * receiver records what reaches it and answers as the path asks:
 *   /<box>/status/<code>[/...]   answers <code> with a JSON body: {"status":<code>}, or after /json/<encoded> the
 *                                percent-decoded <encoded>, or after /bytes/<n> a JSON string of exactly <n> bytes
 *   /<box>/delay/<ms>[/...]      answers 200 after <ms> milliseconds
 *   /<box>/hold/<n>[/...]        answers 200 at once, except the <n>th request of the box, which waits for
 *                                `GET /__release/<box>`: a test keeps a call in flight exactly as long as it needs
 *   /<box>/redirect[/...]        answers 302 to /<box>/ok
 *   /<box>/fail-first/<n>[/...]  answers 500 to the first <n> requests of the box, then 200
 *   /<box>/slow-body/<ms>[/<code>]  sends <code> (200 unless given) and its headers at once, and its JSON body
 *                                <ms> milliseconds later
 *   /<box>/bytes/<n>             answers 200 with a JSON string of exactly <n> bytes ("aaa…")
 *   /<box>/json/<encoded>        answers 200 with the percent-decoded <encoded> as a JSON body
 *   /<box>/cimd/<caching>/<encoded>  answers 200 with the JSON object <encoded>, its `client_id` the URL it was
 *                                fetched at unless it names one: an app's metadata document. <caching> is `-` (no
 *                                caching header), `expires=<s>` (Expires <s> seconds after Date) or the Cache-Control
 *                                value, percent-encoded
 *   /<box>/text                  answers 200 with a text that is not JSON
 *   /<box>/empty                 answers 200 with an empty body
 *   anything else                answers 200 with the `answer` option as JSON ({"ok":true} unless given)
 * `GET /__recorded/<box>` answers the requests recorded under that box, oldest first.
 * `GET /__connections/<group>` answers `{ open, max, waiting, maxWaiting }`: the requests of the boxes named
 *   `<group>~…` open at once, now and at most since the first, from the moment a request arrives until its answer is
 *   sent; and those waiting for their answer's headers, until the headers are sent (a test of the outbound connection
 *   limit counts them across many endpoints).
 * `GET /__dns?name=<name>&type=A|AAAA` is a DNS-over-HTTPS resolver (JSON API) for the outbound address checks:
 * `*.private.test` → 10.1.2.3, `*.mapped.test` → ::ffff:127.0.0.1, `*.public.test` → 93.184.216.34, else nothing.
 *
 * Options, for the callers in Node that watch what arrives in-process:
 *   onRequest(request)  is called with each request (the recorded fields, and `arrivedAt`, the `performance.now()`
 *                       when its whole body was in) before it is answered: the browser tests keep a list, the soak
 *                       and the bench count deliveries and time them.
 *   record: false       keeps nothing for `/__recorded/` (a load run of tens of thousands of deliveries would keep
 *                       them all in memory).
 *   answer              the JSON body of "anything else" (the browser tests' action answers {"in_stock":true,…}).
 * Each receiver records on its own; `close()` stops it, dropping the connections still open.
 */

export type ReceivedRequest = RecordedRequest & { arrivedAt: number };

export type ReceiverOptions = {
  onRequest?: (request: ReceivedRequest) => void;
  record?: boolean;
  answer?: unknown;
};

export type Receiver = { url: string; server: Server; close: () => Promise<void> };

type Connections = { open: number; max: number; waiting: number; maxWaiting: number };
const noConnections = (): Connections => ({ open: 0, max: 0, waiting: 0, maxWaiting: 0 });

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const ZONE: Array<[suffix: string, type: "A" | "AAAA", address: string]> = [
  [".private.test", "A", "10.1.2.3"],
  [".mapped.test", "AAAA", "::ffff:127.0.0.1"],
  [".public.test", "A", "93.184.216.34"],
];

function resolve(name: string, type: string) {
  const answers = ZONE.filter(([suffix, recordType]) => name.endsWith(suffix) && recordType === type).map(
    ([, recordType, data]) => ({ name, type: recordType === "A" ? 1 : 28, TTL: 60, data }),
  );
  return { Status: 0, Answer: answers };
}

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const { onRequest, record = true, answer = { ok: true } } = options;
  const recorded = new Map<string, RecordedRequest[]>();
  /** Requests per box, for fail-first and hold, counted also when nothing is recorded. */
  const seen = new Map<string, number>();
  /** Per box, the release of its held request (hold/<n>), or that the release came first. */
  const held = new Map<string, (() => void) | "released">();
  /**
   * Per group of boxes (`<group>~<box>`), the requests open now and the most open at once; and of them, those still
   * waiting for their answer's headers, now and at most.
   */
  const connections = new Map<string, Connections>();
  const server = createServer(async (request, response) => {
    const path = request.url ?? "/";
    const [box = "", ...rest] = path.slice(1).split("/");
    if (request.method === "GET" && box.startsWith("__dns")) {
      const query = new URL(path, "http://receiver").searchParams;
      response.writeHead(200, { "Content-Type": "application/dns-json" });
      response.end(JSON.stringify(resolve(query.get("name") ?? "", query.get("type") ?? "A")));
      return;
    }
    if (request.method === "GET" && box === "__release") {
      const name = rest[0] ?? "";
      const release = held.get(name);
      held.set(name, "released");
      if (typeof release === "function") release();
      response.writeHead(204);
      response.end();
      return;
    }
    if (request.method === "GET" && box === "__connections") {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify(connections.get(rest[0] ?? "") ?? noConnections()));
      return;
    }
    if (box.includes("~")) {
      const group = box.slice(0, box.indexOf("~"));
      const count = connections.get(group) ?? noConnections();
      count.open += 1;
      count.max = Math.max(count.max, count.open);
      count.waiting += 1;
      count.maxWaiting = Math.max(count.maxWaiting, count.waiting);
      connections.set(group, count);
      let waiting = true;
      const headersSent = () => {
        if (!waiting) return;
        waiting = false;
        count.waiting -= 1;
      };
      const writeHead = response.writeHead.bind(response);
      response.writeHead = ((...args: Parameters<typeof writeHead>) => {
        headersSent();
        return writeHead(...args);
      }) as typeof response.writeHead;
      response.on("close", () => {
        headersSent();
        count.open -= 1;
      });
    }
    if (request.method === "GET" && box === "__recorded") {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify(recorded.get(rest[0] ?? "") ?? []));
      return;
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers).map(([name, value]) => [
        name,
        Array.isArray(value) ? value.join(", ") : (value ?? ""),
      ]),
    );
    const entry = { method: request.method ?? "GET", path, headers, body: await readBody(request), at: Date.now() };
    const arrivedAt = performance.now();
    seen.set(box, (seen.get(box) ?? 0) + 1);
    if (record) recorded.set(box, [...(recorded.get(box) ?? []), entry]);
    onRequest?.({ ...entry, arrivedAt });

    const [behaviour, argument] = rest;
    if (behaviour === "status") {
      response.writeHead(Number(argument), { "Content-Type": "application/json" });
      const [kind, detail = ""] = rest.slice(2);
      if (kind === "json") response.end(decodeURIComponent(detail));
      else if (kind === "bytes") response.end(`"${"a".repeat(Math.max(0, Number(detail) - 2))}"`);
      else response.end(JSON.stringify({ status: Number(argument) }));
    } else if (behaviour === "delay") {
      setTimeout(() => {
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(JSON.stringify({ ok: true }));
      }, Number(argument));
    } else if (behaviour === "hold") {
      const answer = () => {
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(JSON.stringify({ ok: true }));
      };
      if (seen.get(box) !== Number(argument) || held.get(box) === "released") answer();
      else held.set(box, answer);
    } else if (behaviour === "fail-first") {
      const failing = (seen.get(box) ?? 0) <= Number(argument);
      response.writeHead(failing ? 500 : 200, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ ok: !failing }));
    } else if (behaviour === "slow-body") {
      const status = Number(rest[2] ?? 200);
      response.writeHead(status, { "Content-Type": "application/json" });
      response.flushHeaders();
      setTimeout(() => response.end(JSON.stringify({ ok: status < 300 })), Number(argument));
    } else if (behaviour === "bytes") {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(`"${"a".repeat(Math.max(0, Number(argument) - 2))}"`);
    } else if (behaviour === "json") {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(decodeURIComponent(argument ?? ""));
    } else if (behaviour === "cimd") {
      const caching = decodeURIComponent(argument ?? "-");
      const expires = /^expires=(\d+)$/.exec(caching)?.[1];
      const headers: Record<string, string> = { "Content-Type": "application/json" };
      if (expires) headers.Expires = new Date(Date.now() + Number(expires) * 1000).toUTCString();
      else if (caching !== "-") headers["Cache-Control"] = caching;
      response.writeHead(200, headers);
      const document = JSON.parse(decodeURIComponent(rest[2] ?? "{}"));
      response.end(JSON.stringify({ client_id: `http://${request.headers.host}${path}`, ...document }));
    } else if (behaviour === "text") {
      response.writeHead(200, { "Content-Type": "text/plain" });
      response.end("Opening hours: nine to five");
    } else if (behaviour === "empty") {
      response.writeHead(200);
      response.end();
    } else if (behaviour === "redirect") {
      response.writeHead(302, { Location: `/${box}/ok` });
      response.end();
    } else {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(JSON.stringify(answer));
    }
  });
  return { ...(await listenOnLoopback(server)), server };
}

/** `server` listening on a free loopback port: its base URL, and a close that ends every connection first. */
export async function listenOnLoopback(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url: `http://127.0.0.1:${port}`, close };
}
