import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { RecordedRequest } from "./recorded-request";

/**
 * A real HTTP receiver on 127.0.0.1 for outbound calls (webhook deliveries, action calls). Each test uses its own
 * path prefix (a "box"); the receiver records what reaches it and answers as the path asks:
 *   /<box>/status/<code>[/...]   answers <code> with a JSON body
 *   /<box>/delay/<ms>[/...]      answers 200 after <ms> milliseconds
 *   /<box>/redirect[/...]        answers 302 to /<box>/ok
 *   /<box>/fail-first/<n>[/...]  answers 500 to the first <n> requests of the box, then 200
 *   /<box>/bytes/<n>             answers 200 with a JSON string of exactly <n> bytes ("aaa…")
 *   /<box>/json/<encoded>        answers 200 with the percent-decoded <encoded> as a JSON body
 *   /<box>/text                  answers 200 with a text that is not JSON
 *   /<box>/empty                 answers 200 with an empty body
 *   anything else                answers 200 {"ok":true}
 * `GET /__recorded/<box>` answers the requests recorded under that box, oldest first.
 * `GET /__dns?name=<name>&type=A|AAAA` is a DNS-over-HTTPS resolver (JSON API) for the outbound address checks:
 * `*.private.test` → 10.1.2.3, `*.mapped.test` → ::ffff:127.0.0.1, `*.public.test` → 93.184.216.34, else nothing.
 */

const recorded = new Map<string, RecordedRequest[]>();

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

export async function startReceiver(): Promise<{ url: string; server: Server }> {
  const server = createServer(async (request, response) => {
    const path = request.url ?? "/";
    const [box = "", ...rest] = path.slice(1).split("/");
    if (request.method === "GET" && box.startsWith("__dns")) {
      const query = new URL(path, "http://receiver").searchParams;
      response.writeHead(200, { "Content-Type": "application/dns-json" });
      response.end(JSON.stringify(resolve(query.get("name") ?? "", query.get("type") ?? "A")));
      return;
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
    recorded.set(box, [...(recorded.get(box) ?? []), entry]);

    const [behaviour, argument] = rest;
    if (behaviour === "status") {
      response.writeHead(Number(argument), { "Content-Type": "application/json" });
      response.end(JSON.stringify({ status: Number(argument) }));
    } else if (behaviour === "delay") {
      setTimeout(() => {
        response.writeHead(200, { "Content-Type": "application/json" });
        response.end(JSON.stringify({ ok: true }));
      }, Number(argument));
    } else if (behaviour === "fail-first") {
      const failing = (recorded.get(box)?.length ?? 0) <= Number(argument);
      response.writeHead(failing ? 500 : 200, { "Content-Type": "application/json" });
      response.end(JSON.stringify({ ok: !failing }));
    } else if (behaviour === "bytes") {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(`"${"a".repeat(Math.max(0, Number(argument) - 2))}"`);
    } else if (behaviour === "json") {
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(decodeURIComponent(argument ?? ""));
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
      response.end(JSON.stringify({ ok: true }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server };
}
