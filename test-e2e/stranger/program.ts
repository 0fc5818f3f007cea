// A partner's first program, as a stranger writes it with only the packages' READMEs: installed from the packed
// tarballs into an empty project, type-checked with `tsc --strict` and run with plain `node`, and up to its delivery
// with Node 22, Deno and Bun too (test-e2e/packages.e2e.ts).
// Each step prints one line starting with "ok"; any failure ends the process with status 1.
import { once } from "node:events";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createInterface } from "node:readline";
import {
  createPartnerClient,
  paginate,
  unwrap,
  verifyActionCall,
  verifySignedRequest,
  verifyWebhook,
} from "@secretary/partner-sdk";

const apiBase = process.env.API_BASE ?? "http://localhost:8787";
const client = createPartnerClient(process.env.API_KEY ?? "", { baseUrl: `${apiBase}/api/v1` });

// A typed call.
const me = await unwrap(client.GET("/me"));
console.log(`ok me ${me.handle}`);

// A list read to its end, 7 at a time.
let bookings = 0;
for await (const booking of paginate(client, "/appointments", { limit: 7 })) {
  if (typeof booking.id === "number") bookings += 1;
}
const whole = await unwrap(client.GET("/appointments", { params: { query: { limit: 100 } } }));
if (bookings !== whole.data.length || bookings === 0) throw new Error(`paged ${bookings} of ${whole.data.length}`);
console.log(`ok paged ${bookings}`);

// A local server: every request's raw body and headers, answered with what the action answers.
type Received = { rawBody: string; headers: IncomingMessage["headers"] };
const received: Received[] = [];
let arrived: () => void = () => {};
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on("data", (chunk: Buffer) => chunks.push(chunk));
  request.on("end", () => {
    received.push({ rawBody: Buffer.concat(chunks).toString("utf8"), headers: request.headers });
    response.writeHead(200, { "Content-Type": "application/json" }).end('{"in_stock":true,"items_left":3}');
    arrived();
  });
});
server.listen(0, "127.0.0.1");
await once(server, "listening");
const local = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const next = () => new Promise<Received>((resolve) => (arrived = () => resolve(received.at(-1) as Received)));

// A webhook delivery, verified under both schemes.
const endpoint = await unwrap(
  client.POST("/webhooks", { body: { url: `${local}/hooks`, events: ["booking.created"] } }),
);
const delivered = next();
await unwrap(client.POST("/sandbox/events", { body: { event: "booking.created" } }));
const delivery = await delivered;
const event = await verifyWebhook(delivery.rawBody, delivery.headers, endpoint.secret);
if (event.event !== "booking.created") throw new Error(`an event ${event.event}`);
const standard = await verifySignedRequest(delivery.rawBody, delivery.headers, endpoint.secret);
const { "webhook-id": _, "webhook-timestamp": __, "webhook-signature": ___, ...stripeStyle } = delivery.headers;
const service = await verifySignedRequest(delivery.rawBody, stripeStyle, endpoint.secret);
console.log(`ok delivery ${event.data.booking.id} ${standard} ${service}`);
if (process.env.WITHOUT_ACTION === "1") {
  server.close();
  process.exit(0);
}

// A connected action, called once the owner has switched it on.
const action = await unwrap(
  client.POST("/actions", {
    body: {
      name: "check_stock",
      title: "Check stock",
      description: "Tells whether a hair product is in stock in the salon today.",
      url: `${local}/stock`,
      parameters: {
        type: "object",
        properties: { sku: { type: "string", description: "Product code" } },
        required: ["sku"],
      },
    },
  }),
);
console.log(`waiting for the owner to switch on action ${action.id}`);
const input = createInterface({ input: process.stdin });
for await (const line of input) if (line === "switched on") break;
input.close();
const called = next();
const answer = await unwrap(
  client.POST("/sandbox/actions/{id}/calls", {
    params: { path: { id: action.id } },
    body: { arguments: { sku: "SH-200" } },
  }),
);
const call = await verifyActionCall<{ sku: string }>((await called).rawBody, (await called).headers, action.secret);
if (call.arguments.sku !== "SH-200" || answer.call.status !== "success") throw new Error(JSON.stringify(answer));
console.log(`ok action ${call.action} ${call.arguments.sku}`);
server.close();
