import { env } from "cloudflare:test";
import { LEGACY_SHARD, type ShardName, shardOfSecret } from "../../src/db/shards";
import { API_KEY_PREFIX, TEST_API_KEY_PREFIX } from "../../src/domain/access/api-key-format";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { shardDependencies } from "./dependencies";
import { createBusiness } from "./fixtures";
import { call, json } from "./http";
import { createIntake, intakeBody } from "./intakes";
import { reportChange } from "./platform";
import { newBooking, newOrder } from "./platform-changes";
import { subscribe } from "./webhooks";

// Every partner route under /api/v1, as a table, with a record of the caller's business for each path parameter: the
// rows test/api/authentication-every-route.test.ts and test/api/round-trips-every-route.test.ts run.

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
/** A route as the OpenAPI document names it, the status a valid call with a good key answers, and its JSON body. */
export type Route = [method: Method, path: string, ok: number, body?: unknown];

export const ACTION = {
  name: "check_stock",
  title: "Check stock",
  description: "Tells whether a product is in stock today, for customers asking about availability.",
  url: "https://partner.example/stock",
  parameters: {
    type: "object",
    properties: { sku: { type: "string", description: "Product code" } },
    required: ["sku"],
  },
};
/** A real MCP server that lists no tools (test/mcp-servers.ts): registering it stores a server without actions. */
export const MCP_SERVER_URL = `${env.MCP_SERVERS_URL}/routes-table/stateless`;
export const KNOWLEDGE = { title: "Holiday hours", content: "Closed from 24 to 26 December." };

/** Every partner route: a route added to the API needs one row here (the last test fails until it has one). */
export const ROUTES: Route[] = [
  ["GET", "/me", 200],
  ["GET", "/appointments", 200],
  ["GET", "/appointments/{id}", 200],
  ["GET", "/orders", 200],
  ["GET", "/orders/{id}", 200],
  ["GET", "/webhooks", 200],
  ["POST", "/webhooks", 201, { url: "https://partner.example/hooks", events: ["booking.created"] }],
  ["GET", "/webhooks/{id}", 200],
  ["PATCH", "/webhooks/{id}", 200, { url: "https://partner.example/hooks/moved", events: ["order.created"] }],
  ["DELETE", "/webhooks/{id}", 204],
  ["POST", "/webhooks/{id}/enable", 200],
  ["POST", "/webhooks/{id}/rotate-secret", 200, { expires_in: 60 }],
  ["POST", "/actions/{id}/rotate-secret", 200, { expires_in: 60 }],
  ["GET", "/webhooks/{id}/deliveries", 200],
  ["POST", "/webhooks/{id}/deliveries/{delivery_id}/redeliver", 202],
  ["POST", "/webhooks/{id}/recover", 202, { since: new Date(Date.now() - 3_600_000).toISOString() }],
  ["POST", "/webhooks/{id}/test", 202, { event: "booking.created" }],
  ["GET", "/events", 200],
  ["GET", "/events/{id}", 200],
  ["GET", "/knowledge", 200],
  ["PUT", "/knowledge/{key}", 200, { title: "Opening hours", content: "Open every day from 9 to 17." }],
  ["DELETE", "/knowledge/{key}", 204],
  ["GET", "/intakes", 200],
  ["POST", "/intakes", 201, intakeBody()],
  ["GET", "/intakes/{id}", 200],
  ["PATCH", "/intakes/{id}", 200, { title: "Quote request, renovations" }],
  ["DELETE", "/intakes/{id}", 204],
  ["GET", "/intakes/{id}/responses", 200],
  ["GET", "/actions", 200],
  ["POST", "/actions", 201, ACTION],
  ["GET", "/actions/{id}", 200],
  ["PATCH", "/actions/{id}", 200, { title: "Check stock now" }],
  ["DELETE", "/actions/{id}", 204],
  ["GET", "/mcp-servers", 200],
  ["POST", "/mcp-servers", 201, { url: MCP_SERVER_URL }],
  ["GET", "/mcp-servers/{id}", 200],
  ["POST", "/mcp-servers/{id}/refresh", 200],
  ["DELETE", "/mcp-servers/{id}", 204],
  ["POST", "/listen-sessions", 201, { events: ["booking.created"] }],
  // Test keys only: the tables run them with a sandbox business's test key (`isSandboxRoute`).
  ["POST", "/sandbox/events", 201, { event: "booking.created" }],
  ["POST", "/sandbox/intakes/{id}/conversations", 201, { answers: { full_name: "Noor", email: "noor@example.com" } }],
  ["POST", "/sandbox/actions/{id}/calls", 200, { arguments: { sku: "LOAF-2" } }],
];

/** The routes of an app as itself, with its own token (test/oauth/app-token.test.ts): no business's credential opens them. */
export const APP_ROUTES: Route[] = [
  ["GET", "/app/connections", 200],
  ["POST", "/app/webhooks", 201],
  ["GET", "/app/webhooks", 200],
  ["GET", "/app/webhooks/{id}", 200],
  ["DELETE", "/app/webhooks/{id}", 204],
  ["POST", "/app/webhooks/{id}/enable", 200],
  ["GET", "/app/webhooks/{id}/deliveries", 200],
  ["POST", "/app/webhooks/{id}/deliveries/{delivery_id}/redeliver", 202],
  ["POST", "/app/webhooks/{id}/recover", 202],
  ["POST", "/app/listen-sessions", 201],
  ["GET", "/app/events", 200],
];

/**
 * The routes of a sandbox business (docs/decisions.md, Sandbox operations): they answer a test key of a sandbox
 * business only (any other credential gets 403), so the tables run them with one, on records its owner switched on.
 */
export const isSandboxRoute = (path: string) => path.startsWith("/sandbox/");

/** The business a route's row runs on: a sandbox business with a test key for a sandbox route. */
export const businessFor = (path: string, options: { shard?: ShardName } = {}) =>
  createBusiness({ ...options, sandbox: isSandboxRoute(path) });

/**
 * The round trips of a write that reuses a domain function (docs/architecture.md, Performance budget): the
 * credential's, then `reportChange`'s two, or `callAction`'s two (its record, its outcome).
 */
export const REUSED_ROUND_TRIPS: Record<string, number> = {
  "POST /sandbox/events": 3,
  "POST /sandbox/actions/{id}/calls": 3,
};

export async function created<T>(response: Response): Promise<T> {
  if (response.status !== 201) throw new Error(`create failed: ${response.status} ${await response.text()}`);
  return json<T>(response);
}

/** Creates, with the business's own key, the record a path parameter of `resource` names; answers its id or key. */
export const RECORDS: Record<string, (apiKey: string) => Promise<string | number>> = {
  webhooks: async (apiKey) => (await subscribe(apiKey, "https://partner.example/hooks")).id,
  // A key no other file pushes: the database is shared, and some files read knowledge rows by key alone.
  knowledge: async (apiKey) => {
    const response = await call("/api/v1/knowledge/partner-auth-hours", {
      key: apiKey,
      method: "PUT",
      body: KNOWLEDGE,
    });
    return (await created<{ key: string }>(response)).key;
  },
  intakes: async (apiKey) => (await createIntake(apiKey)).id,
  "mcp-servers": async (apiKey) =>
    (
      await created<{ id: number }>(
        await call("/api/v1/mcp-servers", { key: apiKey, method: "POST", body: { url: MCP_SERVER_URL } }),
      )
    ).id,
  actions: async (apiKey) =>
    (await created<{ id: number }>(await call("/api/v1/actions", { key: apiKey, method: "POST", body: ACTION }))).id,
  // A booking and an order of the business, reported by the core platform as the service receives them.
  appointments: async (apiKey) => (await reported(apiKey, { booking: newBooking() })).booking.id,
  orders: async (apiKey) => (await reported(apiKey, { order: newOrder() })).order.id,
  // A test event sent to an endpoint of the business: an event the key can read.
  events: async (apiKey) => (await testEvent(apiKey, await RECORDS.webhooks?.(apiKey))).event_id,
  // An intake and an action of a sandbox business, switched on as its owner does.
  "sandbox/intakes": async (apiKey) => {
    const { id } = await createIntake(apiKey);
    await switchIntakeOn(keyDependencies(apiKey), await businessIdOf(apiKey), id);
    return id;
  },
  "sandbox/actions": async (apiKey) => {
    const id = await RECORDS.actions?.(apiKey);
    await switchAction(keyDependencies(apiKey), await businessIdOf(apiKey), Number(id), true);
    return Number(id);
  },
};

const businessIdOf = async (key: string) => (await json<{ id: string }>(await call("/api/v1/me", { key }))).id;
const keyDependencies = (key: string) =>
  shardDependencies(shardOfSecret(TEST_API_KEY_PREFIX, key) ?? shardOfSecret(API_KEY_PREFIX, key) ?? LEGACY_SHARD);

/** Reports `change` for the credential's business (`POST /internal/v1/businesses/{id}/events`); answers it. */
async function reported<T>(credential: string, change: T): Promise<T> {
  const { id } = await json<{ id: string }>(await call("/api/v1/me", { key: credential }));
  const response = await reportChange(id, change);
  if (response.status !== 201) throw new Error(`report failed: ${response.status} ${await response.text()}`);
  return change;
}

/** A test event to the endpoint (docs/webhooks.md, Test events), written before the answer. */
export async function testEvent(apiKey: string, endpointId: string | number | undefined) {
  const response = await call(`/api/v1/webhooks/${endpointId}/test`, { key: apiKey, method: "POST", body: {} });
  if (response.status !== 202) throw new Error(`test event failed: ${response.status} ${await response.text()}`);
  return json<{ event_id: string }>(response);
}

/** A delivery of the endpoint: that of a test event, as its list shows it. */
export async function deliveryOf(apiKey: string, endpointId: string) {
  await testEvent(apiKey, endpointId);
  const listed = await call(`/api/v1/webhooks/${endpointId}/deliveries`, { key: apiKey });
  return (await json<{ data: Array<{ id: number }> }>(listed)).data[0]?.id;
}

/**
 * The path with its parameter (`{id}`, `{key}`) replaced by a record created in the business of `apiKey`, and a
 * `{delivery_id}` after it by a delivery of that record (an endpoint).
 */
export async function realPath(path: string, apiKey: string) {
  const parameter = /\{\w+\}/.exec(path);
  if (!parameter) return `/api/v1${path}`;
  const resource = (isSandboxRoute(path) ? path.split("/").slice(1, 3).join("/") : path.split("/")[1]) ?? "";
  const create = RECORDS[resource];
  if (!create) throw new Error(`no record for ${path}: add a creator for "${resource}" to RECORDS`);
  const id = encodeURIComponent(String(await create(apiKey)));
  const withId = path.replace(parameter[0], id);
  if (!withId.includes("{delivery_id}")) return `/api/v1${withId}`;
  return `/api/v1${withId.replace("{delivery_id}", String(await deliveryOf(apiKey, id)))}`;
}
