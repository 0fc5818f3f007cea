import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  isInitializeRequest,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { listenOnLoopback } from "./receiver";
import type { RecordedRequest } from "./recorded-request";

/**
 * Real MCP servers (Model Context Protocol, Streamable HTTP transport) for the connected-actions tests, built with the
 * official SDK's low-level `Server`, so that the tool definitions are raw JSON the tests control. One node:http server
 * on 127.0.0.1 (a free port); each test uses its own "box" (letters, digits, `-`, `_`, `~`):
 *   PUT /__tools/<box>             sets what the box offers from a JSON body `McpBox` (answers 204); until then, nothing
 *   POST /<box>/stateless          the MCP endpoint without sessions: a new Server and transport per request, JSON
 *                                  answers; GET and DELETE answer 405, as the SDK's stateless example does
 *   POST|GET|DELETE /<box>/sessions  the MCP endpoint with sessions (`Mcp-Session-Id`), answers as SSE; a request
 *                                  other than `initialize` without a session is refused with 400, with an unknown
 *                                  session with 404; DELETE ends the session
 *   GET /__mcp-recorded/<box>      the requests that reached the box's two endpoints, oldest first
 *   GET /__mcp-sessions/<box>      `{ opened, closed }`: the sessions of the box's sessions endpoint
 *   GET /__mcp-connections/<box>   `{ open, max }`: the box's MCP requests open at once, now and at most, from the
 *                                  moment a request arrives until its answer is sent or its client goes away
 * `close()` stops the server, dropping the connections still open.
 */

/** What `tools/call` of a tool does: see the kinds in `callTool`. */
export type ToolAnswer =
  | { text: string; isError?: true }
  | { structured: Record<string, unknown> }
  | { rpcError: { code: number; message: string } }
  | { hang: true }
  | { bytes: number }
  | { echo: true };

/** A tool as `tools/list` returns it (as is, so a test can offer an invalid schema), and what calling it does. */
export type ToolSpec = {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  annotations?: unknown;
  answer: ToolAnswer;
};

/** What a box offers: its tools, listed `pageSize` per page (all at once unless given), each list after a delay. */
export type McpBox = { tools: ToolSpec[]; pageSize?: number; listDelayMs?: number };

type BoxState = McpBox & {
  recorded: RecordedRequest[];
  sessions: Map<string, StreamableHTTPServerTransport>;
  opened: number;
  closed: number;
  open: number;
  max: number;
};

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function answerJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  response.writeHead(status, { "Content-Type": "application/json", ...headers });
  response.end(JSON.stringify(body));
}

/** A JSON-RPC error without an id, the form in which the SDK's transport refuses an HTTP request. */
function refuse(
  response: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers?: Record<string, string>,
) {
  answerJson(response, status, { jsonrpc: "2.0", error: { code, message }, id: null }, headers);
}

function listTools(box: BoxState, cursor: string | undefined): ListToolsResult {
  const start = cursor === undefined ? 0 : Number(cursor);
  if (!Number.isInteger(start) || start < 0) throw new McpError(ErrorCode.InvalidParams, `Invalid cursor: ${cursor}`);
  const end = box.pageSize ? start + box.pageSize : box.tools.length;
  const tools = box.tools.slice(start, end).map(({ answer: _, ...tool }) => tool);
  // Returned as is, not checked against the SDK's Tool type: tests offer invalid definitions on purpose.
  return { tools: tools as ListToolsResult["tools"], ...(end < box.tools.length && { nextCursor: String(end) }) };
}

/** Runs a tool's answer; `signal` aborts when the request is cancelled or its connection or session closes. */
async function callTool(answer: ToolAnswer, args: unknown, signal: AbortSignal): Promise<CallToolResult> {
  if ("rpcError" in answer) throw new McpError(answer.rpcError.code, answer.rpcError.message);
  if ("hang" in answer) {
    await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    return { content: [] };
  }
  if ("structured" in answer) {
    // A tool that returns structured content should also return it serialized in a text content (MCP 2025-06-18,
    // Tools, Structured Content), for clients that read only text.
    const text = JSON.stringify(answer.structured);
    return { content: [{ type: "text", text }], structuredContent: answer.structured };
  }
  if ("bytes" in answer) return { content: [{ type: "text", text: "a".repeat(answer.bytes) }] };
  if ("echo" in answer) return { content: [{ type: "text", text: JSON.stringify(args ?? {}) }] };
  return { content: [{ type: "text", text: answer.text }], ...(answer.isError && { isError: true }) };
}

/** An MCP server that offers the box's tools as they are when each request arrives. */
function mcpServer(box: BoxState): Server {
  const server = new Server({ name: "test-mcp-server", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request, { signal }) => {
    if (box.listDelayMs) await delay(box.listDelayMs, undefined, { signal, ref: false });
    return listTools(box, request.params?.cursor);
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, { signal }) => {
    const tool = box.tools.find(({ name }) => name === request.params.name);
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Tool ${request.params.name} not found`);
    return callTool(tool.answer, request.params.arguments, signal);
  });
  return server;
}

/** Without sessions: every request gets a Server and transport of its own, closed with its HTTP response. */
async function stateless(box: BoxState, request: IncomingMessage, response: ServerResponse, body: unknown) {
  // A 405 names the methods allowed (RFC 9110, section 15.5.6); the client then goes without a GET stream.
  if (request.method !== "POST") return refuse(response, 405, -32000, "Method not allowed.", { Allow: "POST" });
  const server = mcpServer(box);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  response.on("close", () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request, response, body);
}

/** With sessions: `initialize` opens a session and its transport; later requests name it in `Mcp-Session-Id`. */
async function withSessions(box: BoxState, request: IncomingMessage, response: ServerResponse, body: unknown) {
  const sessionId = request.headers["mcp-session-id"];
  const session = typeof sessionId === "string" ? box.sessions.get(sessionId) : undefined;
  if (session) return session.handleRequest(request, response, body);
  // MCP 2025-06-18, Transports, Session Management: an unknown session is answered 404 (the client starts a new
  // one), a request without a session 400.
  if (sessionId) return refuse(response, 404, -32001, "Session not found");
  if (!isInitializeRequest(body)) return refuse(response, 400, -32000, "Bad Request: No valid session ID provided");
  const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    enableJsonResponse: false,
    onsessioninitialized: (id) => {
      box.sessions.set(id, transport);
      box.opened += 1;
    },
  });
  transport.onclose = () => {
    if (transport.sessionId && box.sessions.delete(transport.sessionId)) box.closed += 1;
  };
  await mcpServer(box).connect(transport);
  await transport.handleRequest(request, response, body);
}

/** Counts the request as open from now until its response closes (sent, or its client gone). */
function countOpen(box: BoxState, response: ServerResponse) {
  box.open += 1;
  box.max = Math.max(box.max, box.open);
  response.on("close", () => {
    box.open -= 1;
  });
}

function record(box: BoxState, request: IncomingMessage, body: string) {
  const headers = Object.fromEntries(
    Object.entries(request.headers).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.join(", ") : (value ?? ""),
    ]),
  );
  box.recorded.push({ method: request.method ?? "GET", path: request.url ?? "/", headers, body, at: Date.now() });
}

export async function startMcpServers(): Promise<{ url: string; close: () => Promise<void> }> {
  const boxes = new Map<string, BoxState>();
  const boxNamed = (name: string) => {
    const box = boxes.get(name) ?? {
      tools: [],
      recorded: [],
      sessions: new Map(),
      opened: 0,
      closed: 0,
      open: 0,
      max: 0,
    };
    boxes.set(name, box);
    return box;
  };
  const route = async (request: IncomingMessage, response: ServerResponse) => {
    const { pathname } = new URL(request.url ?? "/", "http://mcp");
    const [, first = "", second = ""] = /^\/([\w~-]+)\/([\w~-]+)$/.exec(pathname) ?? [];
    if (request.method === "PUT" && first === "__tools") {
      const setup = parseJson(await readBody(request)) as McpBox | undefined;
      if (!Array.isArray(setup?.tools)) return answerJson(response, 400, { error: "expected { tools: [...] }" });
      const { tools, pageSize, listDelayMs } = setup;
      Object.assign(boxNamed(second), { tools, pageSize, listDelayMs });
      response.writeHead(204);
      return response.end();
    }
    if (request.method === "GET" && first === "__mcp-recorded")
      return answerJson(response, 200, boxNamed(second).recorded);
    if (request.method === "GET" && first === "__mcp-sessions") {
      const { opened, closed } = boxNamed(second);
      return answerJson(response, 200, { opened, closed });
    }
    if (request.method === "GET" && first === "__mcp-connections") {
      const { open, max } = boxNamed(second);
      return answerJson(response, 200, { open, max });
    }
    if (!first || (second !== "stateless" && second !== "sessions")) {
      return answerJson(response, 404, { error: `no route for ${request.method} ${pathname}` });
    }
    const box = boxNamed(first);
    countOpen(box, response);
    const body = await readBody(request);
    record(box, request, body);
    const endpoint = second === "stateless" ? stateless : withSessions;
    await endpoint(box, request, response, parseJson(body));
  };
  // As the SDK's examples do: a failure while the answer is unsent is a JSON-RPC internal error, never a crash (a
  // client that goes away mid-request is the common case).
  const server = createServer((request, response) => {
    route(request, response).catch(() => {
      if (!response.headersSent) refuse(response, 500, -32603, "Internal server error");
      else response.destroy();
    });
  });
  return listenOnLoopback(server);
}
