import type { ActionParameters, ListedTool } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { ApiError } from "../../lib/api-error";
import { inMcpExchange, type McpServerTarget } from "../../lib/mcp-client";
import { issueSentence } from "../../lib/validation";
import { CreateActionBody } from "../../schemas/actions";
import { ACTION_TIMEOUT_MS } from "./calls";
import { assertNoContactParameters } from "./contact-details";
import { mcpFailure } from "./mcp-calls";

/*
 * A partner's MCP server's tools (docs/guides/connected-actions.md, From an MCP server): listed within an action
 * call's limits, and each judged by the rules of a registered action, plus one of its own: it says it only reads.
 */

/** A usable tool as a connected action defines it. */
export type ToolDefinition = { name: string; title: string; description: string; parameters: ActionParameters };

/** A tool as listed: its definition when usable, else why not (`ListedTool`). */
export type JudgedTool = ListedTool & { definition: ToolDefinition | null };

/** `tools/list` pages followed at most, so that a server's cursor cannot keep the service listing. */
const MAX_LIST_PAGES = 10;

const ToolAsAction = CreateActionBody.pick({ name: true, title: true, description: true, parameters: true });

const asObject = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};

/**
 * A tool's definition when it fits a connected action, or the sentence saying why it does not: a name of
 * `a-z 0-9 _`, a description of 20 to 600 characters, a title of one line (its name when it has none), flat
 * parameters of the action parameter types with a description each, no parameter asking for contact details, and
 * `annotations.readOnlyHint: true` without `destructiveHint: true`, since an action only reads. Keywords of a
 * parameter other than `type`, `description` and `enum` are not kept: the server still applies its own.
 */
export function judgeTool(tool: unknown): JudgedTool {
  const { name, title, description, inputSchema, annotations } = asObject(tool);
  const listed = typeof name === "string" ? name : "";
  const hints = asObject(annotations);
  const schema = asObject(inputSchema);
  const candidate = {
    name: listed,
    title: title ?? hints.title ?? listed,
    description: description ?? "",
    parameters: { type: schema.type, properties: schema.properties ?? {}, required: schema.required ?? [] },
  };
  const parsed = ToolAsAction.safeParse(candidate);
  const refused = (reason: string): JudgedTool => ({ name: listed, reason, definition: null });
  if (!parsed.success) {
    // Named as the tool names it: its parameters are its `inputSchema`.
    const issue = parsed.error.issues[0] as Parameters<typeof issueSentence>[1];
    const path = issue.path.map((part, index) => (index === 0 && part === "parameters" ? "inputSchema" : part));
    return refused(issueSentence("tool's", { ...issue, path }));
  }
  if (hints.readOnlyHint !== true || hints.destructiveHint === true) {
    return refused(
      "The tool does not declare annotations.readOnlyHint: true (and no destructiveHint): a connected action only reads, so only a tool that says it only reads can be one.",
    );
  }
  const definition = { ...parsed.data, parameters: parsed.data.parameters as ActionParameters };
  try {
    assertNoContactParameters(definition.parameters);
  } catch (error) {
    // Named as the tool names it, as above.
    if (error instanceof ApiError)
      return refused(error.message.replace('The field "parameters.', `The tool's "inputSchema.`));
    throw error;
  }
  return { name: listed, reason: null, definition };
}

/**
 * The server's tools, judged, from `tools/list` and each `nextCursor` it answers: all within 5 s in all and 16,000
 * bytes an answer, as an action call (docs/guides/connected-actions.md, From an MCP server). Answers the sentence
 * saying why not when the server could not list them.
 */
export async function listTools(deps: Dependencies, target: McpServerTarget): Promise<JudgedTool[] | string> {
  const now = deps.clock;
  const listed = await inMcpExchange(
    {
      policy: deps.outbound,
      target,
      deadline: now() + ACTION_TIMEOUT_MS,
      now,
      clientName: deps.outbound.serviceName,
      afterwards: deps.afterAnswer,
    },
    async (send) => {
      const tools: unknown[] = [];
      let cursor: unknown;
      for (let page = 0; page < MAX_LIST_PAGES; page++) {
        const outcome = await send("tools/list", cursor === undefined ? {} : { cursor });
        if (outcome.kind !== "result") return outcome;
        tools.push(...(Array.isArray(outcome.result.tools) ? outcome.result.tools : []));
        cursor = outcome.result.nextCursor;
        if (typeof cursor !== "string") return tools;
      }
      return tools;
    },
  );
  if (!Array.isArray(listed)) {
    // One full stop, also after a connection's error that ends with its own.
    return `The MCP server did not list its tools: ${mcpFailure(listed, ACTION_TIMEOUT_MS).replace(/\.$/, "")}.`;
  }
  const seen = new Set<string>();
  return listed.map((tool) => {
    const judged = judgeTool(tool);
    if (judged.reason === null && seen.has(judged.name)) {
      return { ...judged, reason: "The server lists another tool of the same name.", definition: null };
    }
    seen.add(judged.name);
    return judged;
  });
}
