import { type OutboundOutcome, type OutboundPolicy, signedPost } from "./outbound";
import type { SigningSecrets } from "./signing";

/*
 * The service as an MCP client of a partner's server (docs/guides/connected-actions.md, From an MCP server): JSON-RPC
 * over Streamable HTTP (MCP 2025-06-18, Transports), every request a signed POST under the outbound rules
 * (lib/outbound.ts), answered as JSON or as an event stream. A server with sessions names one when it initializes;
 * a stateless one does not, and then nothing more is sent before the request itself.
 */

/** The protocol version the service asks for; the server may answer another it supports, which is then sent. */
export const MCP_PROTOCOL_VERSION = "2025-06-18";

export type McpServerTarget = { url: string; secrets: SigningSecrets };

/** What one exchange with the server shares: where, how long in all, how each request is signed. */
export type McpExchange = {
  policy: OutboundPolicy;
  target: McpServerTarget;
  /** When the whole exchange must be over, on `now`'s clock: each request gets what is left. */
  deadline: number;
  now: () => number;
  /** The signed `webhook-id` of each request: the call's id for `tools/call`, a fresh one for the rest. */
  requestId?: (method: string) => string | undefined;
};

type Session = { protocolVersion: string; sessionId: string | null };

/** How a request ends: its JSON-RPC result or error, or the outbound failure (or an answer that is not JSON-RPC). */
export type McpOutcome =
  | { kind: "result"; result: Record<string, unknown> }
  | { kind: "rpc_error"; code: number; message: string }
  | { kind: "not_json_rpc"; status: number }
  | Exclude<OutboundOutcome, { kind: "delivered" }>;

/** The JSON-RPC message answering request `id`: the JSON body, or the event of the stream that carries it. */
function answerFor(text: string, contentType: string, id: number): Record<string, unknown> | undefined {
  const messages = contentType.startsWith("text/event-stream")
    ? text
        .split(/\r?\n\r?\n/)
        .map((event) =>
          event
            .split(/\r?\n/)
            .filter((line) => line.startsWith("data:"))
            .map((line) => line.slice(5).trimStart())
            .join("\n"),
        )
        .filter((data) => data !== "")
    : [text];
  for (const data of messages) {
    try {
      const parsed: unknown = JSON.parse(data);
      for (const message of Array.isArray(parsed) ? parsed : [parsed]) {
        if (typeof message === "object" && message !== null && message.id === id) return message;
      }
    } catch {
      // An event that is not JSON (a comment, a keep-alive) answers nothing.
    }
  }
  return undefined;
}

let nextRequestId = 1;

/** One signed POST of a JSON-RPC request (with `id`) or notification (without), within what is left of the deadline. */
async function post(exchange: McpExchange, session: Session | null, method: string, params: object, id?: number) {
  const { policy, target, now } = exchange;
  const body = JSON.stringify({ jsonrpc: "2.0", ...(id === undefined ? {} : { id }), method, params });
  const timeoutMs = exchange.deadline - now();
  if (timeoutMs <= 0) return { kind: "timeout" as const };
  return signedPost(policy, {
    kind: "Actions",
    url: target.url,
    body,
    headers: {
      Accept: "application/json, text/event-stream",
      ...(session ? { "MCP-Protocol-Version": session.protocolVersion } : {}),
      ...(session?.sessionId ? { "Mcp-Session-Id": session.sessionId } : {}),
    },
    webhookId: exchange.requestId?.(method) ?? `mcp_${crypto.randomUUID()}`,
    secrets: target.secrets,
    unixSeconds: Math.floor(now() / 1000),
    timeoutMs,
    readAnswerBytes: MAX_MCP_ANSWER_BYTES,
    anyText: true,
  });
}

/** An answer is read up to 16,000 bytes, as an action's (docs/guides/connected-actions.md, The answer rules). */
export const MAX_MCP_ANSWER_BYTES = 16_000;

async function request(exchange: McpExchange, session: Session | null, method: string, params: object) {
  const id = nextRequestId++;
  const outcome = await post(exchange, session, method, params, id);
  if (outcome.kind !== "delivered") return { outcome, headers: null };
  const message = answerFor(outcome.answer ?? "", outcome.headers?.get("Content-Type") ?? "", id);
  const headers = outcome.headers ?? null;
  const error = message?.error as { code?: unknown; message?: unknown } | undefined;
  if (error && typeof error === "object") {
    const code = typeof error.code === "number" ? error.code : 0;
    return { outcome: { kind: "rpc_error" as const, code, message: String(error.message ?? "") }, headers };
  }
  const result = message?.result;
  if (typeof result !== "object" || result === null || Array.isArray(result)) {
    return { outcome: { kind: "not_json_rpc" as const, status: outcome.status }, headers };
  }
  return { outcome: { kind: "result" as const, result: result as Record<string, unknown> }, headers };
}

/**
 * Opens the exchange (MCP, Lifecycle): `initialize`, then, when the server names a session, the `initialized`
 * notification. Answers the session, or the outcome that ended the exchange.
 */
async function initialize(exchange: McpExchange, clientName: string): Promise<Session | McpOutcome> {
  const { outcome, headers } = await request(exchange, null, "initialize", {
    protocolVersion: MCP_PROTOCOL_VERSION,
    capabilities: {},
    clientInfo: { name: clientName, version: "1.0" },
  });
  if (outcome.kind !== "result") return outcome;
  const version = outcome.result.protocolVersion;
  const session = {
    protocolVersion: typeof version === "string" ? version : MCP_PROTOCOL_VERSION,
    sessionId: headers?.get("Mcp-Session-Id") ?? null,
  };
  if (session.sessionId) {
    const notified = await post(exchange, session, "notifications/initialized", {});
    if (notified.kind !== "delivered") return notified;
  }
  return session;
}

/** How long the end of a session may take: it runs after the answer, and the server's own expiry ends it otherwise. */
const CLOSE_TIMEOUT_MS = 2000;

/** Ends a session the server named (MCP, Transports: Session Management); a stateless exchange has none to end. */
async function close(exchange: McpExchange, session: Session) {
  if (!session.sessionId) return;
  const { policy, target, now } = exchange;
  await signedPost(policy, {
    kind: "Actions",
    method: "DELETE",
    url: target.url,
    body: "",
    headers: { "MCP-Protocol-Version": session.protocolVersion, "Mcp-Session-Id": session.sessionId },
    webhookId: `mcp_${crypto.randomUUID()}`,
    secrets: target.secrets,
    unixSeconds: Math.floor(now() / 1000),
    timeoutMs: CLOSE_TIMEOUT_MS,
  });
}

/**
 * Runs `requests` in one exchange: initialized first, its session ended after (`afterwards` takes the ending, which
 * nobody waits for). `requests` gets a function that sends one request and answers its outcome.
 */
export async function inMcpExchange<T>(
  exchange: McpExchange & { clientName: string; afterwards: (work: Promise<unknown>) => void },
  requests: (send: (method: string, params: object) => Promise<McpOutcome>) => Promise<T>,
): Promise<T | McpOutcome> {
  const session = await initialize(exchange, exchange.clientName);
  if ("kind" in session) return session;
  try {
    return await requests(async (method, params) => (await request(exchange, session, method, params)).outcome);
  } finally {
    exchange.afterwards(close(exchange, session).catch(() => undefined));
  }
}
