import { describe, expect, it } from "vitest";
import { verifyActionCall } from "../../sdk/src/index";
import { callActionByName, testAction } from "../../src/domain/actions/calls";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { findAction } from "../../src/domain/actions/reads";
import { shardDependencies } from "../helpers/dependencies";
import { createBusiness } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { mcpBox, registered, usableTool } from "../helpers/mcp-servers";
import type { ToolSpec } from "../mcp-servers";

type CallResult = {
  call: { id: number; status: string; http_status: number | null; error: string | null; created_at: string };
  result: { content: string } | null;
  truncated: boolean;
};

/** One tool for each way a call can end. */
const TOOLS: ToolSpec[] = [
  usableTool("check_stock"),
  usableTool("structured_stock", { answer: { structured: { in_stock: true, count: 3 } } }),
  usableTool("failing", { answer: { text: "The stock service is down", isError: true } }),
  usableTool("refusing", { answer: { rpcError: { code: -32010, message: "Rate limited" } } }),
  usableTool("hanging", { answer: { hang: true } }),
  usableTool("huge", { answer: { bytes: 16_001 } }),
  usableTool("long", { answer: { bytes: 9000 } }),
];

let messages = 0;
const freshMessage = () => `mcp-msg-${++messages}-${crypto.randomUUID()}`;

/** A business in `shard` with the box's tools registered and switched on, as its owner does. */
async function switchedOn(kind: "stateless" | "sessions", shard: "eu1" | "us1" = "eu1") {
  const { apiKey, business } = await createBusiness({ shard });
  const box = mcpBox(`calls-${kind}`);
  await box.offer({ tools: TOOLS });
  const server = await registered(apiKey, { url: box.url(kind) });
  const deps = shardDependencies(shard);
  for (const tool of server.tools) if (tool.actionId) await switchAction(deps, business.id, tool.actionId, true);
  return { box, business, server, deps };
}

const callTool = (businessId: string, name: string, args: Record<string, unknown> = { date: "2026-12-24" }) =>
  call(`/internal/v1/businesses/${businessId}/actions/${name}/call`, {
    method: "POST",
    headers: RUNTIME,
    body: { conversation_id: "conv-1", message_id: freshMessage(), channel: "whatsapp", arguments: args },
  });

describe.each(["stateless", "sessions"] as const)("the Secretary calls a tool of an MCP server (%s)", (kind) => {
  it("sends tools/call signed as an action call, and gives the Secretary its text, fenced", async () => {
    const { box, business, server } = await switchedOn(kind, kind === "sessions" ? "us1" : "eu1");
    const response = await callTool(business.id, "check_stock");
    await expect(response).toHaveStatus(200);
    const body = await json<CallResult>(response);
    expect(body.call).toMatchObject({ status: "success", http_status: 200, error: null });
    expect(body.result?.content).toBe(JSON.stringify({ date: "2026-12-24" }));
    expect(body.truncated).toBe(false);
    const requests = await box.recorded();
    const sent = requests.find((request) => request.body.includes('"tools/call"'));
    expect(sent?.headers["webhook-id"]).toBe(String(body.call.id));
    const verified = await verifyActionCall(sent?.body ?? "", sent?.headers ?? {}, server.secret ?? "");
    expect(verified).toMatchObject({
      method: "tools/call",
      params: {
        name: "check_stock",
        arguments: { date: "2026-12-24" },
        _meta: {
          call_id: body.call.id,
          business: { id: business.id, handle: business.handle },
          conversation: { id: "conv-1", channel: "whatsapp" },
          created_at: body.call.created_at,
        },
      },
    });
    if (kind === "sessions") {
      await box.allSessionsClosed();
      expect((await box.methods()).slice(-4)).toEqual([
        "initialize",
        "notifications/initialized",
        "tools/call",
        "DELETE",
      ]);
    } else {
      expect((await box.methods()).slice(-2)).toEqual(["initialize", "tools/call"]);
    }
  });

  it("records isError, a JSON-RPC error and a too large answer as errors, counting each failure", async () => {
    const { business } = await switchedOn(kind);
    const cases: [name: string, error: string][] = [
      ["failing", "the tool answered with isError"],
      ["refusing", "JSON-RPC error -32010"],
      ["huge", "larger than 16000 bytes"],
    ];
    for (const [name, error] of cases) {
      const body = await json<CallResult>(await callTool(business.id, name));
      expect(body.call, name).toMatchObject({ status: "error", error });
      expect(body.result).toBeNull();
    }
  });

  it("gives the structured content, and the first 4,000 characters of a longer text", async () => {
    const { business } = await switchedOn(kind);
    const structured = await json<CallResult>(await callTool(business.id, "structured_stock"));
    expect(JSON.parse(structured.result?.content ?? "")).toEqual({ in_stock: true, count: 3 });
    const long = await json<CallResult>(await callTool(business.id, "long"));
    expect(long.result?.content).toBe("a".repeat(4000));
    expect(long.truncated).toBe(true);
  });

  it("records a timeout when the tool does not answer in time (5 s; shortened here)", async () => {
    const { business, deps } = await switchedOn(kind);
    const body = { conversation_id: "conv-1", message_id: freshMessage(), channel: "whatsapp" as const };
    const result = await callActionByName(
      deps,
      business.id,
      "hanging",
      { ...body, arguments: { date: "2026-12-24" } },
      { answerTimeoutMs: 300 },
    );
    expect(result.call).toMatchObject({ status: "timeout", error: "no answer within 0.3 seconds" });
  });
});

describe("a tool's call, checked before anything is sent", () => {
  it("rejects arguments that do not fit the approved schema, sending nothing", async () => {
    const { box, business } = await switchedOn("stateless");
    const before = await box.methods();
    const body = await json<CallResult>(await callTool(business.id, "check_stock", { date: 20261224 }));
    expect(body.call).toMatchObject({ status: "rejected" });
    expect(body.call.error).toMatch(/"date" must be a string/);
    expect(await box.methods()).toEqual(before);
  });

  it("makes at most 2 calls for one customer message", async () => {
    const { business } = await switchedOn("stateless");
    const message = freshMessage();
    const once = () =>
      call(`/internal/v1/businesses/${business.id}/actions/check_stock/call`, {
        method: "POST",
        headers: RUNTIME,
        body: { conversation_id: "c", message_id: message, channel: "whatsapp", arguments: { date: "2026-12-24" } },
      });
    const statuses = (await Promise.all([once(), once(), once()])).map((response) => response.status).sort();
    expect(statuses).toEqual([200, 200, 429]);
  });

  it("lets the owner's Test call a tool that is off", async () => {
    const { apiKey, business } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("owner-test");
    await box.offer({ tools: [usableTool("check_stock")] });
    const server = await registered(apiKey, { url: box.url("stateless") });
    const deps = shardDependencies("eu1");
    const action = await findAction(deps, business.id, server.tools[0]?.actionId ?? 0);
    expect(action.enabled).toBe(false);
    const tested = await testAction(deps, business, action, { date: "2026-12-25" });
    expect(tested.call).toMatchObject({ status: "success" });
    expect(tested.result?.content).toBe(JSON.stringify({ date: "2026-12-25" }));
    const refused = await callTool(business.id, "check_stock");
    await expect(refused).toHaveStatus(409);
  });
});
