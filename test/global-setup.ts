import type { TestProject } from "vitest/node";
import { startMcpServers } from "./mcp-servers";
import { startReceiver } from "./receiver";

declare module "vitest" {
  export interface ProvidedContext {
    receiverUrl: string;
    mcpServersUrl: string;
  }
}

/**
 * Starts the real HTTP receiver and the MCP test servers once for the whole run and hands their addresses to the
 * Worker as RECEIVER_URL and MCP_SERVERS_URL.
 */
export default async function setup(project: TestProject) {
  const { url, server } = await startReceiver();
  const mcpServers = await startMcpServers();
  project.provide("receiverUrl", url);
  project.provide("mcpServersUrl", mcpServers.url);
  return async () => {
    await Promise.all([new Promise<void>((resolve) => server.close(() => resolve())), mcpServers.close()]);
  };
}
