import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { shardDatabase } from "../../src/db/client";
import { actions, mcpServers } from "../../src/db/schema";
import { shardBinding } from "../../src/db/shard-bindings";
import type { ShardName } from "../../src/db/shards";
import { refreshMcpServer } from "../../src/domain/actions/mcp-refresh";
import { NO_ROOM } from "../../src/domain/actions/mcp-registration";
import { NO_LONGER_LISTED, NOT_OFFERED } from "../../src/domain/actions/mcp-servers";
import { acceptActionChange, reviewedVersion, switchAction } from "../../src/domain/actions/owner-decisions";
import { findAction } from "../../src/domain/actions/reads";
import { countingD1 } from "../helpers/counting-d1";
import { shardDependencies, testDependencies } from "../helpers/dependencies";
import { createBusiness, shardDb } from "../helpers/fixtures";
import { call, expectError, expectMissingCredential, json, RUNTIME } from "../helpers/http";
import { type McpServerAnswer, mcpBox, registered, usableTool } from "../helpers/mcp-servers";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { ACTION } from "../helpers/partner-routes";
import { receiverBox } from "../helpers/receiver";
import type { ToolSpec } from "../mcp-servers";

/*
 * docs/guides/connected-actions.md, From an MCP server, When your tools change: a refresh lists the tools again
 * against the real MCP servers (test/mcp-servers.ts). What the owner switched on stays as approved; a tool gone or no
 * longer usable is switched off with its lifecycle event; a new tool becomes an action only when the partner names it.
 */

type ActionAnswer = {
  id: number;
  name: string;
  title: string;
  description: string;
  parameters: Record<string, unknown>;
  enabled: boolean;
  changePending: boolean;
  updatedAt: string;
};
type Envelope = { event: string; data: { action: ActionAnswer; reason?: string } };
type ContextAction = { name: string; description: string; parameters: Record<string, unknown> };
type CallResult = { call: { status: string; error: string | null } };

const READ_ONLY =
  "The tool does not declare annotations.readOnlyHint: true (and no destructiveHint): a connected action only reads, so only a tool that says it only reads can be one.";
const OLD = "2026-01-01T00:00:00.000Z";
const REWRITTEN = "Looks up the stock of one product in every store of the business, for a customer who asks.";
const WITH_STORE = {
  type: "object",
  properties: {
    date: { type: "string", description: "The day, YYYY-MM-DD" },
    store: { type: "string", description: "The store's code" },
  },
  required: ["date", "store"],
};

/** A business in `shard` with the box's `tools` registered from its `kind` endpoint, and the owner's switches. */
async function shopWith(tools: ToolSpec[], kind: "stateless" | "sessions" = "stateless", shard: ShardName = "eu1") {
  const { apiKey, business } = await createBusiness({ shard });
  const box = mcpBox(`refresh-${kind}`);
  await box.offer({ tools });
  const server = await registered(apiKey, { url: box.url(kind) });
  const deps = shardDependencies(shard);
  const idOf = (name: string) => server.tools.find((tool) => tool.name === name)?.actionId ?? 0;
  const switchOn = (name: string) => switchAction(deps, business.id, idOf(name), true);
  const refresh = (body?: { tools: string[] }) =>
    call(`/api/v1/mcp-servers/${server.id}/refresh`, { key: apiKey, method: "POST", body });
  const refreshed = async (body?: { tools: string[] }) => {
    const response = await refresh(body);
    await expect(response).toHaveStatus(200);
    return json<McpServerAnswer>(response);
  };
  const actionOf = async (name: string) =>
    json<ActionAnswer>(await call(`/api/v1/actions/${idOf(name)}`, { key: apiKey }));
  const rowOf = async (name: string) =>
    shardDb(shard)
      .select()
      .from(actions)
      .where(eq(actions.id, idOf(name)))
      .get();
  const lifecycle = async () => {
    const listed = await json<{ data: Envelope[] }>(await call("/api/v1/events", { key: apiKey }));
    return listed.data.filter((envelope) => envelope.event.startsWith("action.")).reverse();
  };
  return { apiKey, business, box, server, deps, shard, idOf, switchOn, refresh, refreshed, actionOf, rowOf, lifecycle };
}

async function contextActions(businessId: string) {
  const response = await call(`/internal/v1/businesses/${businessId}/context?channel=whatsapp`, { headers: RUNTIME });
  await expect(response).toHaveStatus(200);
  return (await json<{ actions: ContextAction[] }>(response)).actions;
}

const runtimeCall = (businessId: string, name: string, args: Record<string, unknown>) =>
  call(`/internal/v1/businesses/${businessId}/actions/${name}/call`, {
    method: "POST",
    headers: RUNTIME,
    body: { conversation_id: "conv-1", message_id: crypto.randomUUID(), channel: "whatsapp", arguments: args },
  });

async function callTool(businessId: string, name: string, args: Record<string, unknown>) {
  const response = await runtimeCall(businessId, name, args);
  await expect(response).toHaveStatus(200);
  return (await json<CallResult>(response)).call;
}

/** The arguments of each tools/call that reached the box, oldest first. */
const sentArguments = async (box: ReturnType<typeof mcpBox>) =>
  (await box.recorded())
    .map((request) => JSON.parse(request.body || "{}") as { method?: string; params?: { arguments?: unknown } })
    .filter((message) => message.method === "tools/call")
    .map((message) => message.params?.arguments);

const APPROVED = usableTool("check_stock");
const APPROVED_CONTEXT = {
  name: "check_stock",
  description: APPROVED.description,
  parameters: APPROVED.inputSchema,
};

describe.each([
  ["stateless", "eu1"],
  ["sessions", "us1"],
] as const)("a switched-on tool that changed on the server (%s, %s)", (kind, shard) => {
  it("keeps the approved description in use, changePending, until the owner accepts the new one", async () => {
    const shop = await shopWith([APPROVED], kind, shard);
    await shop.switchOn("check_stock");
    await shop.box.offer({ tools: [{ ...APPROVED, description: REWRITTEN }] });
    const server = await shop.refreshed();
    expect(server.tools).toEqual([
      { name: "check_stock", actionId: shop.idOf("check_stock"), enabled: true, reason: null },
    ]);
    expect(server.listError).toBeNull();
    if (kind === "sessions") {
      await shop.box.allSessionsClosed();
      expect((await shop.box.methods()).slice(-4)).toEqual([
        "initialize",
        "notifications/initialized",
        "tools/list",
        "DELETE",
      ]);
    }

    const listed = await json<{ data: ActionAnswer[] }>(await call("/api/v1/actions", { key: shop.apiKey }));
    expect(listed.data).toEqual([
      expect.objectContaining({ name: "check_stock", description: REWRITTEN, enabled: true, changePending: true }),
    ]);
    expect(await contextActions(shop.business.id)).toEqual([APPROVED_CONTEXT]);
    expect(await callTool(shop.business.id, "check_stock", { date: "2026-12-24" })).toMatchObject({
      status: "success",
    });
    expect((await shop.lifecycle()).map((envelope) => envelope.event)).toEqual(["action.enabled"]);

    const action = await findAction(shop.deps, shop.business.id, shop.idOf("check_stock"));
    await acceptActionChange(shop.deps, shop.business.id, action.id, { reviewed: reviewedVersion(action) });
    expect(await contextActions(shop.business.id)).toEqual([{ ...APPROVED_CONTEXT, description: REWRITTEN }]);
    expect(await shop.actionOf("check_stock")).toMatchObject({ enabled: true, changePending: false });
    const events = await shop.lifecycle();
    expect(events.map((envelope) => envelope.event)).toEqual(["action.enabled", "action.change_accepted"]);
    expect(events[1]?.data.action).toMatchObject({ description: REWRITTEN, changePending: false });
  });

  it("checks a call against the approved parameters when a required one was added: old arguments are sent", async () => {
    const shop = await shopWith([APPROVED], kind, shard);
    await shop.switchOn("check_stock");
    await shop.box.offer({ tools: [{ ...APPROVED, inputSchema: WITH_STORE }] });
    await shop.refreshed();
    expect(await shop.actionOf("check_stock")).toMatchObject({
      parameters: WITH_STORE,
      enabled: true,
      changePending: true,
    });
    expect(await contextActions(shop.business.id)).toEqual([APPROVED_CONTEXT]);

    expect(await callTool(shop.business.id, "check_stock", { date: "2026-12-24" })).toMatchObject({
      status: "success",
    });
    expect(await callTool(shop.business.id, "check_stock", { date: "2026-12-24", store: "A1" })).toMatchObject({
      status: "rejected",
      error: 'The arguments do not fit the parameters: "store" is not a parameter of this action.',
    });
    expect(await sentArguments(shop.box)).toEqual([{ date: "2026-12-24" }]);

    // Accepted, the new schema is the one calls are checked against: the store is now asked for.
    const action = await findAction(shop.deps, shop.business.id, shop.idOf("check_stock"));
    await acceptActionChange(shop.deps, shop.business.id, action.id, { reviewed: reviewedVersion(action) });
    await expectError(
      await runtimeCall(shop.business.id, "check_stock", { date: "2026-12-24" }),
      422,
      'The required parameter "store" is missing: ask the customer for it instead of calling.',
      { code: "action_arguments_missing", param: "arguments.store" },
    );
    expect(await callTool(shop.business.id, "check_stock", { date: "2026-12-25", store: "A1" })).toMatchObject({
      status: "success",
    });
    expect(await sentArguments(shop.box)).toEqual([{ date: "2026-12-24" }, { date: "2026-12-25", store: "A1" }]);
  });
});

describe("a refresh that finds", () => {
  it("a new title applies it at once; nothing changed writes nothing", async () => {
    const shop = await shopWith([APPROVED, usableTool("check_price")]);
    await shop.switchOn("check_stock");
    await shardDb("eu1").update(actions).set({ updatedAt: OLD }).where(eq(actions.mcpServerId, shop.server.id));
    const before = { stock: await shop.rowOf("check_stock"), price: await shop.rowOf("check_price") };

    await shop.refreshed();
    expect(await shop.rowOf("check_stock")).toEqual(before.stock);
    expect(await shop.rowOf("check_price")).toEqual(before.price);

    await shop.box.offer({ tools: [{ ...APPROVED, title: "Stock today" }, usableTool("check_price")] });
    await shop.refreshed();
    expect(await shop.actionOf("check_stock")).toMatchObject({
      title: "Stock today",
      enabled: true,
      changePending: false,
      updatedAt: expect.not.stringMatching(OLD),
    });
    expect(await shop.rowOf("check_price")).toEqual(before.price);
    expect(await contextActions(shop.business.id)).toEqual([APPROVED_CONTEXT]);
    expect((await shop.lifecycle()).map((envelope) => envelope.event)).toEqual(["action.enabled"]);
  });

  it("a tool no longer listed switches its action off as removed, until the tool is back", async () => {
    const shop = await shopWith([APPROVED, usableTool("check_price")], "sessions", "us1");
    await shop.switchOn("check_stock");
    await shop.box.offer({ tools: [usableTool("check_price")] });
    const server = await shop.refreshed();
    const gone = { name: "check_stock", actionId: shop.idOf("check_stock"), enabled: false, reason: NO_LONGER_LISTED };
    expect(server.tools).toEqual([expect.objectContaining({ name: "check_price" }), gone]);
    expect(
      (await json<McpServerAnswer>(await call(`/api/v1/mcp-servers/${server.id}`, { key: shop.apiKey }))).tools,
    ).toEqual(server.tools);
    expect(await shop.rowOf("check_stock")).toMatchObject({
      enabled: false,
      offReason: "removed",
      approvedDescription: null,
      approvedParameters: null,
    });
    expect(await contextActions(shop.business.id)).toEqual([]);
    const disabled = (await shop.lifecycle()).at(-1);
    expect(disabled).toMatchObject({
      event: "action.disabled",
      data: { reason: "removed", action: { id: shop.idOf("check_stock"), enabled: false } },
    });
    await expect(shop.switchOn("check_stock")).rejects.toMatchObject({ status: 409, code: "invalid_state" });

    // Still gone: nothing more is written.
    const row = await shop.rowOf("check_stock");
    expect((await shop.refreshed()).tools).toEqual(server.tools);
    expect(await shop.rowOf("check_stock")).toEqual(row);
    expect((await shop.lifecycle()).map((envelope) => envelope.event)).toEqual(["action.enabled", "action.disabled"]);

    // Back on the server, it waits for the owner as a new one.
    await shop.box.offer({ tools: [APPROVED, usableTool("check_price")] });
    const back = await shop.refreshed();
    expect(back.tools[0]).toEqual({
      name: "check_stock",
      actionId: shop.idOf("check_stock"),
      enabled: false,
      reason: null,
    });
    expect(await shop.rowOf("check_stock")).toMatchObject({ enabled: false, offReason: null });
    await shop.switchOn("check_stock");
    expect(await contextActions(shop.business.id)).toEqual([APPROVED_CONTEXT]);
  });

  it("a tool no longer usable switches its action off as changed", async () => {
    const shop = await shopWith([APPROVED]);
    await shop.switchOn("check_stock");
    await shop.box.offer({ tools: [{ ...APPROVED, annotations: {} }] });
    const server = await shop.refreshed();
    expect(server.tools).toEqual([
      { name: "check_stock", actionId: shop.idOf("check_stock"), enabled: false, reason: READ_ONLY },
    ]);
    expect(await shop.rowOf("check_stock")).toMatchObject({ enabled: false, offReason: "unusable" });
    expect(await contextActions(shop.business.id)).toEqual([]);
    expect((await shop.lifecycle()).at(-1)).toMatchObject({
      event: "action.disabled",
      data: { reason: "changed", action: { id: shop.idOf("check_stock"), enabled: false } },
    });
    // The owner cannot switch it on, nor switch it off into an action that could be: only the server can.
    await expect(shop.switchOn("check_stock")).rejects.toMatchObject({ status: 409, code: "invalid_state" });
    await switchAction(shardDependencies("eu1"), shop.business.id, shop.idOf("check_stock"), false);
    expect(await shop.rowOf("check_stock")).toMatchObject({ enabled: false, offReason: "unusable" });
    await shop.box.offer({ tools: [APPROVED] });
    await shop.refreshed();
    expect(await shop.rowOf("check_stock")).toMatchObject({ enabled: false, offReason: null });
    await shop.switchOn("check_stock");
  });

  it("a tool removed whose action is off marks it removed without an event", async () => {
    const shop = await shopWith([APPROVED]);
    await shop.box.offer({ tools: [] });
    await shop.refreshed();
    expect(await shop.rowOf("check_stock")).toMatchObject({ enabled: false, offReason: "removed" });
    expect(await shop.lifecycle()).toEqual([]);
  });
});

describe("a new tool on the server", () => {
  it("is listed but not offered until the refresh names it, then becomes an action that starts off", async () => {
    const shop = await shopWith([APPROVED]);
    await shop.box.offer({ tools: [APPROVED, usableTool("check_price"), usableTool("no_hint", { annotations: {} })] });
    const listedOnly = await shop.refreshed();
    expect(listedOnly.tools.slice(1)).toEqual([
      { name: "check_price", actionId: null, enabled: false, reason: NOT_OFFERED },
      { name: "no_hint", actionId: null, enabled: false, reason: READ_ONLY },
    ]);
    const count = async () =>
      (await json<{ data: unknown[] }>(await call("/api/v1/actions", { key: shop.apiKey }))).data;
    expect(await count()).toHaveLength(1);

    await shardDb("eu1").update(mcpServers).set({ listedAt: OLD }).where(eq(mcpServers.id, shop.server.id));
    await expectError(
      await shop.refresh({ tools: ["check_price", "check_time"] }),
      400,
      'The field "tools[1]" names "check_time", which the server does not list.',
      { code: "parameter_invalid", param: "tools[1]" },
    );
    const unchanged = await shardDb("eu1").select().from(mcpServers).where(eq(mcpServers.id, shop.server.id)).get();
    expect(unchanged?.listedAt).toBe(OLD);
    expect(await count()).toHaveLength(1);

    const offered = await shop.refreshed({ tools: ["check_price", "no_hint"] });
    const price = offered.tools.find((tool) => tool.name === "check_price");
    expect(price).toEqual({ name: "check_price", actionId: expect.any(Number), enabled: false, reason: null });
    expect(offered.tools.find((tool) => tool.name === "no_hint")).toMatchObject({ actionId: null, reason: READ_ONLY });
    expect(await count()).toEqual([
      expect.objectContaining({ name: "check_stock" }),
      expect.objectContaining({ id: price?.actionId, name: "check_price", enabled: false, source: "mcp_server" }),
    ]);
    // Named again, it is the same action.
    expect((await shop.refreshed({ tools: ["check_price"] })).tools).toEqual(offered.tools);
    expect(await count()).toHaveLength(2);
  });

  it("beyond the business's 10 actions is answered with its reason and no action", async () => {
    const shop = await shopWith([APPROVED]);
    for (let index = 0; index < 8; index++) {
      const body = { ...ACTION, name: `plain_${index}`, url: receiverBox().url("/ok") };
      await expect(await call("/api/v1/actions", { key: shop.apiKey, method: "POST", body })).toHaveStatus(201);
    }
    await shop.box.offer({ tools: [APPROVED, usableTool("first"), usableTool("second")] });
    const server = await shop.refreshed({ tools: ["first", "second"] });
    expect(server.tools.slice(1)).toEqual([
      { name: "first", actionId: expect.any(Number), enabled: false, reason: null },
      { name: "second", actionId: null, enabled: false, reason: NO_ROOM },
    ]);
    expect(await shardDb("eu1").$count(actions, eq(actions.businessId, shop.business.id))).toBe(10);
  });
});

describe("a listing that fails", () => {
  it("answers 200 with listError, keeping the tools and the actions as they were", async () => {
    const shop = await shopWith([APPROVED, usableTool("check_price")]);
    await shop.switchOn("check_stock");
    const before = { stock: await shop.rowOf("check_stock"), price: await shop.rowOf("check_price") };
    const cases: [url: string, listError: string][] = [
      [receiverBox("mcp-down").url("/status/500"), "The MCP server did not list its tools: HTTP 500."],
      ["http://127.0.0.1:1/mcp", expect.stringMatching(/^The MCP server did not list its tools: /)],
    ];
    for (const [url, listError] of cases) {
      // The server's address as stored: the tools that were listed stay, the listing now fails.
      await shardDb("eu1").update(mcpServers).set({ url }).where(eq(mcpServers.id, shop.server.id));
      const server = await shop.refreshed();
      expect(server.listError).toEqual(listError);
      expect(server.tools).toEqual(
        shop.server.tools.map((tool) => (tool.name === "check_stock" ? { ...tool, enabled: true } : tool)),
      );
      expect(server.listedAt >= shop.server.listedAt).toBe(true);
      expect(await shop.rowOf("check_stock")).toEqual(before.stock);
      expect(await shop.rowOf("check_price")).toEqual(before.price);
    }
    // Nothing is offered from a listing that failed: listError says why.
    const named = await shop.refreshed({ tools: ["check_time"] });
    expect(named.listError).toEqual(expect.stringMatching(/^The MCP server did not list its tools: /));
    expect(named.tools.map((tool) => tool.name)).toEqual(["check_stock", "check_price"]);
    expect(await shardDb("eu1").$count(actions, eq(actions.businessId, shop.business.id))).toBe(2);
    expect((await shop.lifecycle()).map((envelope) => envelope.event)).toEqual(["action.enabled"]);
  });
});

describe("who may refresh a server", () => {
  it("answers 401 without a key, 404 for another business's server, the other side's and a non-numeric id", async () => {
    const shop = await shopWith([APPROVED]);
    const other = await createBusiness({ shard: "eu1" });
    const theirs = await registered(other.apiKey, { url: shop.box.url() });
    const app = await createOwnerBusiness({ shard: "eu1" });
    const { tokens } = await connectApp(app);
    const appServer = await registered(tokens.access_token, { url: shop.box.url() });
    expect(appServer.source).toBe("oauth_app");

    await expectMissingCredential(await call(`/api/v1/mcp-servers/${shop.server.id}/refresh`, { method: "POST" }));
    const notFound = "No MCP server with that id exists for this business.";
    for (const [key, id] of [
      [shop.apiKey, theirs.id],
      [shop.apiKey, "x"],
      [app.apiKey, appServer.id],
      [tokens.access_token, "12x"],
    ] as const) {
      await expectError(await call(`/api/v1/mcp-servers/${id}/refresh`, { key, method: "POST" }), 404, notFound, {
        code: "not_found",
      });
    }
    const byApp = await call(`/api/v1/mcp-servers/${appServer.id}/refresh`, {
      key: tokens.access_token,
      method: "POST",
    });
    await expect(byApp).toHaveStatus(200);
    expect((await json<McpServerAnswer>(byApp)).source).toBe("oauth_app");
  });
});

describe("refreshes at the same moment", () => {
  it("leave consistent rows and write one event per switch", async () => {
    const tools = ["gone", "unusable", "rewritten", "kept"].map((name) => usableTool(name));
    const shop = await shopWith(tools, "sessions", "eu1");
    for (const name of ["gone", "unusable", "rewritten"]) await shop.switchOn(name);
    await shop.box.offer({
      tools: [
        { ...usableTool("unusable"), annotations: { readOnlyHint: true, destructiveHint: true } },
        { ...usableTool("rewritten"), description: REWRITTEN },
        usableTool("kept"),
        usableTool("fresh"),
      ],
    });
    const answers = await Promise.all([shop.refresh({ tools: ["fresh"] }), shop.refresh({ tools: ["fresh"] })]);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    const servers = await Promise.all(answers.map((answer) => json<McpServerAnswer>(answer)));
    expect(servers[0]?.tools).toEqual(servers[1]?.tools);
    const fresh = await shardDb("eu1").select().from(actions).where(eq(actions.mcpServerId, shop.server.id));
    expect(fresh.filter((row) => row.name === "fresh")).toEqual([expect.objectContaining({ enabled: false })]);
    expect(servers[0]?.tools.find((tool) => tool.name === "fresh")).toEqual({
      name: "fresh",
      actionId: fresh.find((row) => row.name === "fresh")?.id,
      enabled: false,
      reason: null,
    });

    expect(await shop.rowOf("gone")).toMatchObject({ enabled: false, offReason: "removed" });
    expect(await shop.rowOf("unusable")).toMatchObject({ enabled: false, offReason: "unusable" });
    expect(await shop.rowOf("rewritten")).toMatchObject({
      enabled: true,
      description: REWRITTEN,
      approvedDescription: usableTool("rewritten").description,
    });
    const disabled = (await shop.lifecycle()).filter((envelope) => envelope.event === "action.disabled");
    expect(disabled.map((envelope) => [envelope.data.action.name, envelope.data.reason]).sort()).toEqual([
      ["gone", "removed"],
      ["unusable", "changed"],
    ]);
    await shop.box.allSessionsClosed();
  });

  it("naming the same new tool answer the one action it became", async () => {
    const shop = await shopWith([APPROVED]);
    await shop.box.offer({ tools: [APPROVED, usableTool("fresh")] });
    const answers = await Promise.all([1, 2, 3].map(() => shop.refreshed({ tools: ["fresh"] })));
    const rows = await shardDb("eu1").select().from(actions).where(eq(actions.mcpServerId, shop.server.id));
    const fresh = {
      name: "fresh",
      actionId: rows.find((row) => row.name === "fresh")?.id,
      enabled: false,
      reason: null,
    };
    expect(rows).toHaveLength(2);
    for (const answer of answers) expect(answer.tools[1]).toEqual(fresh);
  });
});

describe("refreshes at the same moment of a driven clock", () => {
  it("write one event per switch, also when the action was last written at that same moment", async () => {
    const shop = await shopWith([APPROVED, usableTool("check_price")]);
    await shop.switchOn("check_stock");
    const at = Date.now();
    await shardDb("eu1")
      .update(actions)
      .set({ updatedAt: new Date(at).toISOString() })
      .where(eq(actions.mcpServerId, shop.server.id));
    await shop.box.offer({ tools: [usableTool("check_price")] });
    const deps = testDependencies("eu1", { clock: () => at });
    const refresh = () => refreshMcpServer(deps, shop.business.id, shop.business.id, shop.server.id);
    const servers = await Promise.all([refresh(), refresh()]);
    expect(servers[0].tools).toEqual(servers[1].tools);
    expect(await shop.rowOf("check_stock")).toMatchObject({ enabled: false, offReason: "removed" });
    const switched = (await shop.lifecycle()).map((envelope) => [envelope.event, envelope.data.reason]);
    expect(switched).toEqual([
      ["action.enabled", "owner"],
      ["action.disabled", "removed"],
    ]);
  });
});

describe("the refresh's D1 round trips", () => {
  it("are two: the read, and the write of every change with its events", async () => {
    const shop = await shopWith([APPROVED, usableTool("check_price")]);
    await shop.switchOn("check_stock");
    await shop.switchOn("check_price");
    await shop.box.offer({ tools: [{ ...APPROVED, description: REWRITTEN }, usableTool("check_time")] });
    const { d1, trips } = countingD1(shardBinding(env, "eu1"));
    const deps = testDependencies("eu1", { db: shardDatabase(d1) });
    const server = await refreshMcpServer(deps, shop.business.id, shop.business.id, shop.server.id, {
      offer: ["check_time"],
    });
    expect(trips, trips.join(" | ")).toHaveLength(2);
    expect(server.tools.map((tool) => [tool.name, tool.actionId !== null, tool.enabled])).toEqual([
      ["check_stock", true, true],
      ["check_time", true, false],
      ["check_price", true, false],
    ]);
    expect(await shop.rowOf("check_stock")).toMatchObject({ description: REWRITTEN, enabled: true });
    expect(await shop.rowOf("check_price")).toMatchObject({ enabled: false, offReason: "removed" });
  });
});
