import { randomUUID } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ErrorCode, type Tool } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type McpBox, startMcpServers, type ToolSpec } from "./mcp-servers";
import type { RecordedRequest } from "./recorded-request";

/*
 * The MCP test servers (test/mcp-servers.ts) answer the official SDK's own client as the connected-actions tests
 * expect: each endpoint lists and calls the tools a test sets, the sessions endpoint keeps sessions as the SDK does,
 * and the control paths report what arrived.
 */

let url: string;
let close: () => Promise<void>;
const clients: Client[] = [];

beforeAll(async () => {
  ({ url, close } = await startMcpServers());
});

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close()));
  await close();
});

type Endpoint = "stateless" | "sessions";
const ACCEPT_BOTH = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

const newBox = () => `box-${randomUUID()}`;

async function offer(box: string, setup: McpBox) {
  const response = await fetch(`${url}/__tools/${box}`, { method: "PUT", body: JSON.stringify(setup) });
  await expect(response).toHaveStatus(204);
}

async function connect(box: string, endpoint: Endpoint, headers: Record<string, string> = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/${box}/${endpoint}`), {
    requestInit: { headers },
  });
  const client = new Client({ name: "mcp-servers-test", version: "1.0.0" });
  clients.push(client);
  await client.connect(transport);
  return { client, transport };
}

/** One JSON-RPC message POSTed as is, without the SDK's client (and so without `initialize` unless it is one). */
function post(box: string, endpoint: Endpoint, message: object, init: RequestInit = {}) {
  return fetch(`${url}/${box}/${endpoint}`, {
    method: "POST",
    headers: ACCEPT_BOTH,
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, ...message }),
    ...init,
  });
}

async function read<T>(path: string): Promise<T> {
  return (await fetch(`${url}${path}`)).json() as Promise<T>;
}

const tool = (name: string, answer: ToolSpec["answer"]): ToolSpec => ({
  name,
  inputSchema: { type: "object" },
  answer,
});

const ANSWERS: ToolSpec[] = [
  tool("text", { text: "Open nine to five" }),
  tool("structured", { structured: { in_stock: true, count: 3 } }),
  tool("failing", { text: "Out of stock", isError: true }),
  tool("bytes", { bytes: 1000 }),
  tool("echo", { echo: true }),
  tool("refusing", { rpcError: { code: -32010, message: "Rate limited" } }),
  tool("hanging", { hang: true }),
];

describe.each<Endpoint>(["stateless", "sessions"])("the %s endpoint", (endpoint) => {
  it("lists the tools as set, page by page, following nextCursor", async () => {
    const box = newBox();
    const tools = ["a", "b", "c", "d", "e"].map((name) => tool(name, { text: name }));
    tools[0] = {
      ...tool("a", { text: "a" }),
      title: "Check stock",
      description: "Says whether a product is in stock",
      inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
      annotations: { readOnlyHint: true, openWorldHint: false },
    };
    await offer(box, { tools, pageSize: 2 });
    const { client } = await connect(box, endpoint);

    const pages: Tool[][] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? undefined : { cursor });
      pages.push(page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);

    expect(pages.map((page) => page.map(({ name }) => name))).toEqual([["a", "b"], ["c", "d"], ["e"]]);
    expect(pages[0]?.[0]).toEqual({
      name: "a",
      title: "Check stock",
      description: "Says whether a product is in stock",
      inputSchema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
      annotations: { readOnlyHint: true, openWorldHint: false },
    });
  });

  it("answers each kind of tools/call", async () => {
    const box = newBox();
    await offer(box, { tools: ANSWERS });
    const { client } = await connect(box, endpoint);

    expect(await client.callTool({ name: "text" })).toEqual({ content: [{ type: "text", text: "Open nine to five" }] });
    expect(await client.callTool({ name: "structured" })).toEqual({
      content: [{ type: "text", text: '{"in_stock":true,"count":3}' }],
      structuredContent: { in_stock: true, count: 3 },
    });
    expect(await client.callTool({ name: "failing" })).toEqual({
      content: [{ type: "text", text: "Out of stock" }],
      isError: true,
    });
    expect(await client.callTool({ name: "bytes" })).toEqual({ content: [{ type: "text", text: "a".repeat(1000) }] });
    expect(await client.callTool({ name: "echo", arguments: { sku: "X-1", qty: 2 } })).toEqual({
      content: [{ type: "text", text: '{"sku":"X-1","qty":2}' }],
    });
    await expect(client.callTool({ name: "refusing" })).rejects.toMatchObject({
      code: -32010,
      message: expect.stringContaining("Rate limited"),
    });
    await expect(client.callTool({ name: "missing" })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it("delays tools/list as set, and a client that went away mid-list does not stop the server", async () => {
    const box = newBox();
    await offer(box, { tools: [tool("a", { text: "a" })], listDelayMs: 200 });
    const { client, transport } = await connect(box, endpoint);
    await expect(client.listTools(undefined, { timeout: 10 })).rejects.toMatchObject({
      code: ErrorCode.RequestTimeout,
    });

    // A client that drops its connection without cancelling (as a Worker whose fetch times out does).
    const gaveUp = new AbortController();
    const session: Record<string, string> = transport.sessionId ? { "mcp-session-id": transport.sessionId } : {};
    const init = { headers: { ...ACCEPT_BOTH, ...session }, signal: gaveUp.signal };
    // An SSE answer sends its headers first: the abort then ends the reading of the body rather than the fetch.
    const abandoned = post(box, endpoint, { id: "abandoned", method: "tools/list" }, init)
      .then((response) => response.text())
      .catch((error: unknown) => error);
    const arrived = async () =>
      (await read<RecordedRequest[]>(`/__mcp-recorded/${box}`)).some(({ body }) => body.includes('"abandoned"'));
    // Looked for often, so that the client goes away well within the list's delay.
    await vi.waitFor(async () => expect(await arrived()).toBe(true), { interval: 5 });
    gaveUp.abort();
    await expect(abandoned).resolves.toMatchObject({ name: "AbortError" });

    // Asked after the abandoned list, so answered after that list's delay has run out.
    expect((await client.listTools()).tools.map(({ name }) => name)).toEqual(["a"]);
  });
});

describe("the stateless endpoint", () => {
  it("answers tools/list and tools/call without initialize, with definitions as set even when invalid", async () => {
    const box = newBox();
    await offer(box, { tools: [{ name: "odd", inputSchema: { type: "string" }, answer: { echo: true } }] });

    const listed = await post(box, "stateless", { method: "tools/list" });
    await expect(listed).toHaveStatus(200);
    expect(listed.headers.get("Content-Type")).toBe("application/json");
    expect(await listed.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { tools: [{ name: "odd", inputSchema: { type: "string" } }] },
    });
    const called = await post(box, "stateless", { method: "tools/call", params: { name: "odd", arguments: { a: 1 } } });
    expect(await called.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      result: { content: [{ type: "text", text: '{"a":1}' }] },
    });
  });

  it("sends an rpcError as a JSON-RPC error with its code", async () => {
    const box = newBox();
    await offer(box, { tools: ANSWERS });
    const answer = await post(box, "stateless", { method: "tools/call", params: { name: "refusing" } });
    expect(await answer.json()).toEqual({
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32010, message: "MCP error -32010: Rate limited" },
    });
  });

  it("negotiates the client's protocol version when it knows it, else its latest", async () => {
    const box = newBox();
    const initialize = (protocolVersion: string) =>
      post(box, "stateless", {
        method: "initialize",
        params: { protocolVersion, capabilities: {}, clientInfo: { name: "raw", version: "1" } },
      }).then((response) => response.json());
    expect(await initialize("2025-03-26")).toMatchObject({ result: { protocolVersion: "2025-03-26" } });
    expect(await initialize("1999-01-01")).toMatchObject({
      result: { protocolVersion: "2025-11-25", capabilities: { tools: {} } },
    });
  });

  it("insists on an Accept of both JSON and event streams, and has no GET stream", async () => {
    const box = newBox();
    const jsonOnly = await post(
      box,
      "stateless",
      { method: "tools/list" },
      {
        headers: { "Content-Type": "application/json", Accept: "application/json" },
      },
    );
    await expect(jsonOnly).toHaveStatus(406);
    const stream = await fetch(`${url}/${box}/stateless`, { headers: { Accept: "text/event-stream" } });
    await expect(stream).toHaveStatus(405);
    expect(stream.headers.get("Allow")).toBe("POST");
  });

  it("keeps a hanging call open until its client goes away, and counts the requests open at once", async () => {
    const box = newBox();
    await offer(box, { tools: ANSWERS, listDelayMs: 50 });
    await Promise.all([
      post(box, "stateless", { method: "tools/list" }),
      post(box, "stateless", { method: "tools/list" }),
    ]);
    await vi.waitFor(async () => expect(await read(`/__mcp-connections/${box}`)).toEqual({ open: 0, max: 2 }));

    const gaveUp = new AbortController();
    const hanging = post(
      box,
      "stateless",
      { method: "tools/call", params: { name: "hanging" } },
      {
        signal: gaveUp.signal,
      },
    ).catch((error: unknown) => error);
    await vi.waitFor(async () => expect(await read(`/__mcp-connections/${box}`)).toEqual({ open: 1, max: 2 }));
    gaveUp.abort();
    await expect(hanging).resolves.toMatchObject({ name: "AbortError" });
    await vi.waitFor(async () => expect(await read(`/__mcp-connections/${box}`)).toEqual({ open: 0, max: 2 }));
  });
});

describe("the sessions endpoint", () => {
  it("opens a session on initialize, answers as SSE, and counts it closed on DELETE", async () => {
    const box = newBox();
    await offer(box, { tools: [tool("a", { text: "a" })] });
    const { client, transport } = await connect(box, "sessions");
    expect(transport.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.getServerVersion()).toEqual({ name: "test-mcp-server", version: "1.0.0" });
    expect(transport.protocolVersion).toBe("2025-11-25");
    expect(await read(`/__mcp-sessions/${box}`)).toEqual({ opened: 1, closed: 0 });

    const listed = await post(
      box,
      "sessions",
      { method: "tools/list" },
      {
        headers: { ...ACCEPT_BOTH, "mcp-session-id": transport.sessionId ?? "" },
      },
    );
    expect(listed.headers.get("Content-Type")).toBe("text/event-stream");
    expect(await listed.text()).toContain('data: {"result":{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}');

    await transport.terminateSession();
    expect(await read(`/__mcp-sessions/${box}`)).toEqual({ opened: 1, closed: 1 });
    await expect(client.listTools()).rejects.toThrow();
  });

  it("refuses a request without a session with 400, and with an unknown one with 404", async () => {
    const box = newBox();
    const without = await post(box, "sessions", { method: "tools/list" });
    await expect(without).toHaveStatus(400);
    expect(await without.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Bad Request: No valid session ID provided" },
      id: null,
    });
    const unknown = await post(
      box,
      "sessions",
      { method: "tools/list" },
      {
        headers: { ...ACCEPT_BOTH, "mcp-session-id": randomUUID() },
      },
    );
    await expect(unknown).toHaveStatus(404);
    expect(await unknown.json()).toEqual({
      jsonrpc: "2.0",
      error: { code: -32001, message: "Session not found" },
      id: null,
    });
    expect(await read(`/__mcp-sessions/${box}`)).toEqual({ opened: 0, closed: 0 });
  });
});

describe("the control paths", () => {
  it("record every request to the box's endpoints, oldest first, with lower-cased headers and the body", async () => {
    const box = newBox();
    await offer(box, { tools: [tool("a", { text: "a" })] });
    const { client, transport } = await connect(box, "sessions", { "Webhook-Id": "msg_1", "X-Signature": "v1=abc" });
    await client.listTools();
    const sessionId = transport.sessionId;
    await transport.terminateSession();

    const recorded = await read<RecordedRequest[]>(`/__mcp-recorded/${box}`);
    const posted = recorded.filter(({ method }) => method === "POST");
    expect(posted.map(({ body }) => (JSON.parse(body) as { method: string }).method)).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
    ]);
    expect(recorded.filter(({ method }) => method === "DELETE")).toMatchObject([
      { path: `/${box}/sessions`, body: "" },
    ]);
    expect(posted[0]?.headers).toMatchObject({ "webhook-id": "msg_1", "x-signature": "v1=abc" });
    expect(posted[0]?.headers).not.toHaveProperty("mcp-session-id");
    expect(posted[2]?.headers).toMatchObject({ "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" });
    expect(recorded.map(({ at }) => at)).toEqual(recorded.map(({ at }) => at).sort());
  });

  it("refuse a setup without tools and an unknown path", async () => {
    const box = newBox();
    const setup = await fetch(`${url}/__tools/${box}`, { method: "PUT", body: '{"tool":[]}' });
    await expect(setup).toHaveStatus(400);
    await expect(await fetch(`${url}/${box}/other`, { method: "POST" })).toHaveStatus(404);
    expect(await read(`/__mcp-recorded/${box}`)).toEqual([]);
  });
});
