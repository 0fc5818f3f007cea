import { describe, expect, it } from "vitest";
import { createBusiness } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { mcpBox, registered, usableTool } from "../helpers/mcp-servers";

describe("registering an MCP server", () => {
  it("offers each usable tool of a stateless server as a connected action, off", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("register");
    await box.offer({ tools: [usableTool("check_stock"), usableTool("Bad-Name")] });
    const server = await registered(apiKey, { url: box.url("stateless") });
    expect(server.tools).toEqual([
      { name: "check_stock", actionId: expect.any(Number), enabled: false, reason: null },
      { name: "Bad-Name", actionId: null, enabled: false, reason: expect.stringContaining('The tool\'s "name"') },
    ]);
    expect(await box.methods()).toEqual(["initialize", "tools/list"]);
    const actions = await json<{ data: Record<string, unknown>[] }>(await call("/api/v1/actions", { key: apiKey }));
    expect(actions.data).toMatchObject([
      { name: "check_stock", source: "mcp_server", mcpServerId: server.id, enabled: false },
    ]);
  });

  it("initializes a session, follows the cursor and ends the session", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("sessions");
    await box.offer({ tools: [usableTool("a_one"), usableTool("b_two"), usableTool("c_three")], pageSize: 2 });
    const server = await registered(apiKey, { url: box.url("sessions") });
    expect(server.tools.map((tool) => tool.actionId !== null)).toEqual([true, true, true]);
    await box.allSessionsClosed();
    expect(await box.methods()).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/list",
      "DELETE",
    ]);
  });
});
