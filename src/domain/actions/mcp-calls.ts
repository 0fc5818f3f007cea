import type { Dependencies } from "../../dependencies";
import { inMcpExchange, type McpOutcome } from "../../lib/mcp-client";
import type { Clock } from "../../lib/time";
import { signingSecrets } from "../webhooks/secret-rotation";
import type { Action } from "./action-object";
import { type Outcome, outcomeOf } from "./call-outcome";

/*
 * A call of an action that is a tool of a partner's MCP server (docs/guides/connected-actions.md, From an MCP server):
 * `tools/call` in one exchange with the server, signed as an action call, with an action call's limits and outcomes.
 */

/** An exchange's failure in the words of an action call's history (docs/guides/connected-actions.md, The call history). */
export function mcpFailure(outcome: McpOutcome, timeoutMs: number): string {
  switch (outcome.kind) {
    case "result":
      return "the server answered";
    case "rpc_error":
      return `JSON-RPC error ${outcome.code}`;
    case "not_json_rpc":
      return "the server did not answer with a JSON-RPC result";
    default:
      return outcomeOf(outcome, timeoutMs).error ?? "the request failed";
  }
}

/** What the Secretary reads of a result: its text content, or its structured content as JSON when it has no text. */
function answerOf(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? result.content : [];
  const texts = content
    .filter((item) => item?.type === "text" && typeof item.text === "string")
    .map((item) => item.text as string);
  if (texts.length > 0 || result.structuredContent === undefined) return texts.join("\n");
  return JSON.stringify(result.structuredContent);
}

export type ToolCall = {
  id: number;
  createdAt: string;
  arguments: Record<string, unknown>;
  business: { id: string; handle: string };
  conversation: { id: string; channel: string };
};

/**
 * `tools/call` of the action's tool: `webhook-id` is the call's id, as an action call's, and `_meta` carries what an
 * action call's body does besides the arguments. An answer with `isError`, or a JSON-RPC error, is an `error`.
 */
export async function callTool(
  deps: Dependencies,
  action: Action,
  call: ToolCall,
  timeoutMs: number,
  now: Clock,
): Promise<Outcome> {
  const outcome = await inMcpExchange(
    {
      policy: deps.outbound,
      target: { url: action.url, secrets: signingSecrets(action, now()) },
      deadline: now() + timeoutMs,
      now,
      requestId: (method) => (method === "tools/call" ? String(call.id) : undefined),
      clientName: deps.outbound.serviceName,
      afterwards: deps.afterAnswer,
    },
    (send) =>
      send("tools/call", {
        name: action.name,
        arguments: call.arguments,
        _meta: {
          call_id: call.id,
          business: call.business,
          conversation: call.conversation,
          created_at: call.createdAt,
        },
      }),
  );
  if (outcome.kind === "result") {
    if (outcome.result.isError === true) {
      return { status: "error", httpStatus: 200, error: "the tool answered with isError", answer: null };
    }
    return { status: "success", httpStatus: 200, error: null, answer: answerOf(outcome.result) };
  }
  if (outcome.kind === "rpc_error" || outcome.kind === "not_json_rpc") {
    return { status: "error", httpStatus: 200, error: mcpFailure(outcome, timeoutMs), answer: null };
  }
  return outcomeOf(outcome, timeoutMs);
}
