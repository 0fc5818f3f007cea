import { describe, expect, it } from "vitest";
import { verifyActionCall, verifySignedRequest } from "../../sdk/src/index";
import { signedIn, switchActionOn } from "../helpers/dashboard";
import { call, json } from "../helpers/http";
import { mcpBox, registered, usableTool } from "../helpers/mcp-servers";
import type { OwnerBusiness } from "../helpers/oauth";

/*
 * A partner developer's MCP server in the sandbox (docs/guides/sandbox.md, Call an action;
 * docs/guides/connected-actions.md, From an MCP server): the sandbox's test key registers the server, its owner
 * switches the tools' actions on in the dashboard, and `POST /sandbox/actions/{id}/calls` makes the Secretary's
 * `tools/call` of a real MCP server (the official SDK's, with sessions), every request signed with the server's secret.
 */

type Sandbox = { api_key: string; owner_email: string; owner_password: string; business_id: string };
type SandboxCall = {
  call: { id: number; status: string; arguments: Record<string, unknown>; error: string | null };
  result: { content: string; boundary: string; text: string } | null;
  truncated: boolean;
};

describe("an MCP server's tool in a sandbox, called as the Secretary calls it", async () => {
  const created = await call("/api/sandbox/businesses", { method: "POST", body: { name: "MCP Bakery" } });
  await expect(created).toHaveStatus(201);
  const sandbox = await json<Sandbox>(created);
  const key = sandbox.api_key;
  const owner = { owner: { email: sandbox.owner_email, password: sandbox.owner_password } } as OwnerBusiness;
  const box = mcpBox("sandbox-mcp");
  await box.offer({
    tools: [
      usableTool("check_availability"),
      usableTool("check_stock", {
        inputSchema: {
          type: "object",
          properties: { size: { type: "string", description: "The size asked for", enum: ["S", "M", "L"] } },
        },
        answer: { structured: { in_stock: true, items_left: 3 } },
      }),
      usableTool("check_delivery", { answer: { text: "The courier is not reachable.", isError: true } }),
    ],
  });
  const server = await registered(key, { url: box.url("sessions") });
  const actionOf = (name: string) => server.tools.find((tool) => tool.name === name)?.actionId ?? 0;
  const jar = await signedIn(owner);
  for (const { actionId } of server.tools) await expect(await switchActionOn(jar, actionId ?? 0)).toHaveStatus(303);
  await box.allSessionsClosed();
  const before = (await box.recorded()).length;
  const callTool = (name: string, args: Record<string, unknown>) =>
    call(`/api/v1/sandbox/actions/${actionOf(name)}/calls`, { key, method: "POST", body: { arguments: args } });

  it("registers the server with the test key: each tool an action of source mcp_server, off until the owner switches it on", async () => {
    expect(server.secret).toMatch(/^whsec_/);
    expect(server.tools.map(({ name, enabled, reason }) => ({ name, enabled, reason }))).toEqual([
      { name: "check_availability", enabled: false, reason: null },
      { name: "check_stock", enabled: false, reason: null },
      { name: "check_delivery", enabled: false, reason: null },
    ]);
    const { data } = await json<{ data: { id: number; source: string; mcpServerId: number; enabled: boolean }[] }>(
      await call("/api/v1/actions", { key }),
    );
    expect(data.map(({ id, source, mcpServerId }) => ({ id, source, mcpServerId }))).toEqual(
      server.tools.map((tool) => ({ id: tool.actionId, source: "mcp_server", mcpServerId: server.id })),
    );
    expect(data.every((action) => action.enabled)).toBe(true);
  });

  it("calls the tool end to end: a session opened, tools/call signed with the server's secret, the answer fenced, the session ended", async () => {
    const response = await callTool("check_availability", { date: "2026-12-02" });
    await expect(response).toHaveStatus(200);
    const made = await json<SandboxCall>(response);
    expect(made).toMatchObject({
      call: { status: "success", arguments: { date: "2026-12-02" }, error: null },
      result: { content: '{"date":"2026-12-02"}' },
      truncated: false,
    });
    expect(made.result?.text).toContain(made.result?.boundary);
    await box.allSessionsClosed();
    const exchange = (await box.recorded()).slice(before);
    expect(exchange.map((request) => (request.body ? JSON.parse(request.body).method : request.method))).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/call",
      "DELETE",
    ]);
    for (const request of exchange) {
      expect(await verifySignedRequest(request.body, request.headers, server.secret ?? "")).toBe("standard-webhooks");
      expect(request.headers["x-service-signature"]).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    }
    const [toolCall] = exchange.filter((request) => request.body.includes('"tools/call"'));
    expect(toolCall?.headers["webhook-id"]).toBe(String(made.call.id));
    const message = await verifyActionCall(toolCall?.body ?? "", toolCall?.headers ?? {}, server.secret ?? "");
    expect(message).toMatchObject({
      jsonrpc: "2.0",
      method: "tools/call",
      params: {
        name: "check_availability",
        arguments: { date: "2026-12-02" },
        _meta: {
          call_id: made.call.id,
          business: { id: sandbox.business_id },
          conversation: { id: expect.stringMatching(/^sandbox_conv_/), channel: "chat_page" },
          created_at: expect.any(String),
        },
      },
    });
    const history = await json<{ calls: { id: number; status: string }[] }>(
      await call(`/api/v1/actions/${actionOf("check_availability")}`, { key }),
    );
    expect(history.calls).toContainEqual(expect.objectContaining({ id: made.call.id, status: "success" }));
  });

  it("hands the Secretary a tool's text content, and records an isError answer as an error", async () => {
    const stock = await json<SandboxCall>(await callTool("check_stock", { size: "M" }));
    expect(stock).toMatchObject({
      call: { status: "success" },
      result: { content: '{"in_stock":true,"items_left":3}' },
    });
    const delivery = await json<SandboxCall>(await callTool("check_delivery", { date: "2026-12-02" }));
    expect(delivery).toMatchObject({
      call: { status: "error", error: "the tool answered with isError" },
      result: null,
    });
  });

  it("checks the arguments against the tool's schema first: a value outside its enum is rejected and nothing is sent", async () => {
    await box.allSessionsClosed();
    const sent = (await box.recorded()).length;
    const rejected = await json<SandboxCall>(await callTool("check_stock", { size: "XL" }));
    expect(rejected).toMatchObject({ call: { status: "rejected" }, result: null });
    expect(rejected.call.error).toMatch(/^The arguments do not fit the parameters/);
    expect((await box.recorded()).length).toBe(sent);
  });
});
