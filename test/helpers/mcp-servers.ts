import { env } from "cloudflare:test";
import { vi } from "vitest";
import type { McpBox, ToolSpec } from "../mcp-servers";
import type { RecordedRequest } from "../recorded-request";
import { call, json } from "./http";

/*
 * A test's own box on the real MCP servers (test/mcp-servers.ts, started by test/global-setup.ts): what it offers,
 * its two endpoints, and what reached them.
 */

/** A usable tool: an identifier name, a description of 20 to 600 characters, flat parameters, read-only. */
export const usableTool = (name: string, overrides: Partial<ToolSpec> = {}): ToolSpec => ({
  name,
  title: `Look up ${name}`,
  description: `Looks up ${name} for a customer who asks about it, by the date they give.`,
  inputSchema: {
    type: "object",
    properties: { date: { type: "string", description: "The day, YYYY-MM-DD" } },
    required: ["date"],
  },
  annotations: { readOnlyHint: true },
  answer: { echo: true },
  ...overrides,
});

export function mcpBox(name = "mcp") {
  const box = `${name}-${crypto.randomUUID()}`;
  const base = env.MCP_SERVERS_URL;
  const read = async <T>(path: string) => (await (await fetch(`${base}/${path}/${box}`)).json()) as T;
  const offer = async (setup: McpBox) => {
    const response = await fetch(`${base}/__tools/${box}`, { method: "PUT", body: JSON.stringify(setup) });
    if (response.status !== 204) throw new Error(`the MCP test server refused the tools: ${response.status}`);
  };
  return {
    url: (kind: "stateless" | "sessions" = "stateless") => `${base}/${box}/${kind}`,
    offer,
    recorded: () => read<RecordedRequest[]>("__mcp-recorded"),
    /** The JSON-RPC methods that reached the box, in order (a DELETE as "DELETE"). */
    methods: async () =>
      (await read<RecordedRequest[]>("__mcp-recorded")).map((request) =>
        request.method === "POST" ? (JSON.parse(request.body) as { method: string }).method : request.method,
      ),
    sessions: () => read<{ opened: number; closed: number }>("__mcp-sessions"),
    /** Waits until every session the box opened has been ended (the end runs after the answer). */
    allSessionsClosed: () =>
      vi.waitFor(
        async () => {
          const sessions = await read<{ opened: number; closed: number }>("__mcp-sessions");
          if (sessions.opened === 0 || sessions.closed !== sessions.opened) throw new Error(JSON.stringify(sessions));
          return sessions;
        },
        { timeout: 5000, interval: 50 },
      ),
    connections: () => read<{ open: number; max: number }>("__mcp-connections"),
  };
}

export type McpServerAnswer = {
  id: number;
  url: string;
  secret?: string;
  source: string;
  tools: { name: string; actionId: number | null; enabled: boolean; reason: string | null }[];
  listedAt: string;
  listError: string | null;
  createdAt: string;
};

/** `POST /api/v1/mcp-servers` with `key`: the response, unread. */
export const registerServer = (key: string, body: Record<string, unknown>) =>
  call("/api/v1/mcp-servers", { key, method: "POST", body });

/** Registers the server and answers its body, failing the test on anything but a 201. */
export async function registered(key: string, body: Record<string, unknown>) {
  const response = await registerServer(key, body);
  if (response.status !== 201) throw new Error(`registration answered ${response.status}: ${await response.text()}`);
  return json<McpServerAnswer>(response);
}
