import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { verifyActionCall } from "../../sdk/src/index";
import { actions, mcpServers } from "../../src/db/schema";
import { NAME_TAKEN, NO_ROOM, registerMcpServer } from "../../src/domain/actions/mcp-registration";
import { NOT_OFFERED, OFFERED_WITHOUT_ROOM } from "../../src/domain/actions/mcp-servers";
import { testDependencies } from "../helpers/dependencies";
import { createBusiness, shardDb } from "../helpers/fixtures";
import { call, expectError, expectMissingCredential, json } from "../helpers/http";
import { type McpServerAnswer, mcpBox, registered, registerServer, usableTool } from "../helpers/mcp-servers";
import { ACTION } from "../helpers/partner-routes";
import { apiKeyPrincipal } from "../helpers/principals";
import { receiverBox } from "../helpers/receiver";

const READ_ONLY =
  "The tool does not declare annotations.readOnlyHint: true (and no destructiveHint): a connected action only reads, so only a tool that says it only reads can be one.";

/** One tool for each rule a tool can break, after a usable one. */
const JUDGED = [
  usableTool("check_stock"),
  usableTool("CheckStock"),
  usableTool("too_short", { description: "Looks up stock." }),
  usableTool("nested", {
    inputSchema: {
      type: "object",
      properties: { where: { type: "object", description: "A place", properties: { city: { type: "string" } } } },
    },
  }),
  usableTool("no_parameter_description", {
    inputSchema: { type: "object", properties: { date: { type: "string" } } },
  }),
  usableTool("nine_parameters", {
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(
        Array.from({ length: 9 }, (_, index) => [`p${index}`, { type: "string", description: "A value" }]),
      ),
    },
  }),
  usableTool("asks_phone", {
    inputSchema: {
      type: "object",
      properties: { phone: { type: "string", description: "The customer's phone number" } },
    },
  }),
  usableTool("no_hint", { annotations: {} }),
  usableTool("destructive", { annotations: { readOnlyHint: true, destructiveHint: true } }),
];

const reasonsOf = (server: McpServerAnswer) => Object.fromEntries(server.tools.map((tool) => [tool.name, tool.reason]));

describe("registering an MCP server", () => {
  it("offers each usable tool as a connected action that starts off, and says why each other one is not", async () => {
    const { apiKey, business } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("register");
    await box.offer({ tools: JUDGED });
    const response = await registerServer(apiKey, { url: box.url("stateless") });
    await expect(response).toHaveStatus(201);
    const server = await json<McpServerAnswer>(response);
    expect(server).toEqual({
      id: expect.any(Number),
      url: box.url("stateless"),
      source: "api_key",
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
      tools: expect.any(Array),
      listedAt: expect.any(String),
      listError: null,
      createdAt: server.listedAt,
    });
    expect(server.tools[0]).toEqual({
      name: "check_stock",
      actionId: expect.any(Number),
      enabled: false,
      reason: null,
    });
    expect(reasonsOf(server)).toEqual({
      check_stock: null,
      CheckStock: `The tool's "name" must be 1 to 64 lower-case letters, digits or underscores, starting with a letter.`,
      too_short: `The tool's "description" must be 20 to 600 characters long.`,
      nested: `The tool's "inputSchema.properties.where.properties" nests parameters, and parameters are flat.`,
      no_parameter_description: expect.stringMatching(/^The tool's "inputSchema.properties.date.description" /),
      nine_parameters: `The tool's "inputSchema.properties" must define at most 8 parameters.`,
      asks_phone: `The tool's "inputSchema.properties.phone" asks for a phone number: an action may not ask for contact details (an intake may).`,
      no_hint: READ_ONLY,
      destructive: READ_ONLY,
    });
    expect(server.tools.filter((tool) => tool.actionId !== null)).toHaveLength(1);

    const listed = await json<{ data: Record<string, unknown>[] }>(await call("/api/v1/actions", { key: apiKey }));
    expect(listed.data).toEqual([
      expect.objectContaining({
        id: server.tools[0]?.actionId,
        name: "check_stock",
        title: "Look up check_stock",
        description: usableTool("check_stock").description,
        url: box.url("stateless"),
        parameters: usableTool("check_stock").inputSchema,
        enabled: false,
        source: "mcp_server",
        mcpServerId: server.id,
      }),
    ]);
    const [row] = await shardDb("eu1").select().from(mcpServers).where(eq(mcpServers.id, server.id));
    expect(row).toMatchObject({ businessId: business.id, secret: server.secret });
    // The secret is shown once.
    const again = await json<McpServerAnswer>(await call(`/api/v1/mcp-servers/${server.id}`, { key: apiKey }));
    expect(again).not.toHaveProperty("secret");
    expect(again.tools).toEqual(server.tools);
  });

  it("signs every request as an action call, which the SDK's verifyActionCall verifies with the server's secret", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("signed");
    await box.offer({ tools: [usableTool("check_stock")] });
    const server = await registered(apiKey, { url: box.url("stateless") });
    const requests = await box.recorded();
    expect(await box.methods()).toEqual(["initialize", "tools/list"]);
    for (const request of requests) {
      const verified = await verifyActionCall(request.body, request.headers, server.secret ?? "");
      expect(verified).toMatchObject({ jsonrpc: "2.0" });
      expect(request.headers["webhook-id"]).toMatch(/^mcp_[0-9a-f-]{36}$/);
      expect(request.headers.accept).toBe("application/json, text/event-stream");
      expect(request.headers["user-agent"]).toBe("Secretary-Actions/1.0 (+http://localhost:8787)");
    }
    expect(JSON.parse(requests[0]?.body ?? "{}")).toMatchObject({
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "Secretary" } },
    });
    expect(requests[1]?.headers["mcp-protocol-version"]).toBe("2025-06-18");
    await expect(
      verifyActionCall(requests[1]?.body ?? "", requests[1]?.headers ?? {}, "whsec_other"),
    ).rejects.toThrow();
  });

  it("initializes a session, follows each nextCursor, and ends the session", async () => {
    const { apiKey } = await createBusiness({ shard: "us1" });
    const box = mcpBox("sessions");
    const names = ["a_one", "b_two", "c_three", "d_four", "e_five"];
    await box.offer({ tools: names.map((name) => usableTool(name)), pageSize: 2 });
    const server = await registered(apiKey, { url: box.url("sessions") });
    expect(server.tools.map((tool) => [tool.name, tool.actionId !== null])).toEqual(names.map((name) => [name, true]));
    await box.allSessionsClosed();
    expect(await box.methods()).toEqual([
      "initialize",
      "notifications/initialized",
      "tools/list",
      "tools/list",
      "tools/list",
      "DELETE",
    ]);
    const requests = await box.recorded();
    const session = requests[1]?.headers["mcp-session-id"];
    expect(session).toMatch(/.+/);
    for (const request of requests.slice(1)) expect(request.headers["mcp-session-id"]).toBe(session);
    // In the business's own shard, and in no other.
    const stored = await shardDb("us1").select().from(actions).where(eq(actions.mcpServerId, server.id));
    expect(stored).toHaveLength(5);
    expect(await shardDb("eu1").select().from(mcpServers).where(eq(mcpServers.id, server.id))).toEqual([]);
  });

  it("follows at most 10 pages of tools/list, offering the tools of those pages: 10 actions, the maximum", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("pages");
    const names = Array.from({ length: 12 }, (_, index) => `tool_${String(index).padStart(2, "0")}`);
    await box.offer({ tools: names.map((name) => usableTool(name)), pageSize: 1 });
    const server = await registered(apiKey, { url: box.url("stateless") });
    expect(server.tools.map((tool) => tool.name)).toEqual(names.slice(0, 10));
    expect(server.tools.every((tool) => tool.actionId !== null)).toBe(true);
    expect((await box.methods()).filter((method) => method === "tools/list")).toHaveLength(10);
  });

  it("offers only the tools named, and refuses a name the server does not list", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("named");
    await box.offer({
      tools: [usableTool("check_stock"), usableTool("check_price"), usableTool("no_hint", { annotations: {} })],
    });
    const server = await registered(apiKey, { url: box.url("stateless"), tools: ["check_price", "no_hint"] });
    expect(reasonsOf(server)).toEqual({ check_stock: NOT_OFFERED, check_price: null, no_hint: READ_ONLY });
    await expectError(
      await registerServer(apiKey, { url: box.url("stateless"), tools: ["check_price", "check_time"] }),
      400,
      'The field "tools[1]" names "check_time", which the server does not list.',
      { code: "parameter_invalid", param: "tools[1]" },
    );
    await expectError(
      await registerServer(apiKey, { url: box.url("stateless"), tools: ["check_price", "check_price"] }),
      400,
      'The field "tools" must not name a tool twice.',
      { param: "tools" },
    );
    const listed = await json<{ data: unknown[] }>(await call("/api/v1/actions", { key: apiKey }));
    expect(listed.data).toHaveLength(1);
  });

  it("counts the tools in the business's 10 actions, with plain actions, and a name taken is not offered", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    for (let index = 0; index < 8; index++) {
      const body = { ...ACTION, name: `plain_${index}`, url: receiverBox().url("/ok") };
      await expect(await call("/api/v1/actions", { key: apiKey, method: "POST", body })).toHaveStatus(201);
    }
    const box = mcpBox("limit");
    await box.offer({ tools: ["plain_0", "first", "second", "third"].map((name) => usableTool(name)) });
    const server = await registered(apiKey, { url: box.url("stateless") });
    expect(reasonsOf(server)).toEqual({ plain_0: NAME_TAKEN, first: null, second: null, third: NO_ROOM });
    // Read later, an offered tool without an action says so, whichever of the two kept it out.
    const read = await json<McpServerAnswer>(await call(`/api/v1/mcp-servers/${server.id}`, { key: apiKey }));
    expect(reasonsOf(read)).toEqual({
      plain_0: OFFERED_WITHOUT_ROOM,
      first: null,
      second: null,
      third: OFFERED_WITHOUT_ROOM,
    });
    await expectError(
      await call("/api/v1/actions", { key: apiKey, method: "POST", body: { ...ACTION, name: "eleventh" } }),
      403,
      /at most 10 connected actions/,
      { code: "limit_reached" },
    );
  });

  it("keeps the business at 10 actions however many registrations race", async () => {
    const { apiKey, business } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("race");
    await box.offer({ tools: Array.from({ length: 6 }, (_, index) => usableTool(`tool_${index}`)) });
    const servers = await Promise.all(
      [0, 1, 2].map(async (index) => {
        const other = mcpBox(`race-${index}`);
        await other.offer({ tools: Array.from({ length: 6 }, (_, tool) => usableTool(`tool_${index}_${tool}`)) });
        return registered(apiKey, { url: other.url("stateless") });
      }),
    );
    const stored = await shardDb("eu1").select().from(actions).where(eq(actions.businessId, business.id));
    expect(stored).toHaveLength(10);
    const offered = servers.flatMap((server) => server.tools.filter((tool) => tool.actionId !== null));
    expect(offered.map((tool) => tool.actionId).sort()).toEqual(stored.map((row) => row.id).sort());
    const refused = servers.flatMap((server) => server.tools.filter((tool) => tool.actionId === null));
    expect(refused).toHaveLength(8);
    for (const tool of refused) expect(tool.reason).toBe(NO_ROOM);
  });

  it("refuses a server that does not list its tools, with the reason, and stores nothing", async () => {
    const { apiKey, business } = await createBusiness({ shard: "eu1" });
    const answering = receiverBox("not-mcp");
    const cases: [url: string, reason: string][] = [
      [answering.url("/status/500"), "The MCP server did not list its tools: HTTP 500."],
      [
        answering.url("/ok"),
        "The MCP server did not list its tools: the server did not answer with a JSON-RPC result.",
      ],
      [answering.url(`/bytes/${16_001}`), "The MCP server did not list its tools: larger than 16000 bytes."],
    ];
    for (const [url, reason] of cases) {
      await expectError(await registerServer(apiKey, { url }), 400, reason, {
        code: "parameter_invalid",
        param: "url",
      });
    }
    const refused = await registerServer(apiKey, { url: "http://127.0.0.1:1/mcp" });
    const { error } = await expectError(
      refused,
      400,
      /^The MCP server did not list its tools: the connection failed: /,
    );
    expect(error).toMatch(/[^.]\.$/);
    const big = mcpBox("big");
    await big.offer({ tools: [usableTool("big", { title: "x".repeat(17_000) })] });
    await expectError(
      await registerServer(apiKey, { url: big.url("stateless") }),
      400,
      "The MCP server did not list its tools: larger than 16000 bytes.",
    );
    expect(await shardDb("eu1").select().from(mcpServers).where(eq(mcpServers.businessId, business.id))).toEqual([]);
  });

  it("lists the tools within 5 seconds in all, each request timed by what is left", async () => {
    const { apiKey, business } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("slow");
    await box.offer({ tools: [usableTool("check_stock")], listDelayMs: 2000 });
    // The clock stands 4.8 s on after the listing starts: what is left for each request is 200 ms.
    let reads = 0;
    const start = Date.now();
    const deps = testDependencies("eu1", {
      clock: () => (reads++ === 0 ? start : start + 4800 + (Date.now() - start)),
    });
    const principal = await apiKeyPrincipal(apiKey);
    const before = Date.now();
    await expect(registerMcpServer(deps, principal, { url: box.url("stateless") })).rejects.toThrow(
      "The MCP server did not list its tools: no answer within 5 seconds.",
    );
    expect(Date.now() - before).toBeLessThan(1500);
    expect(await box.methods()).toEqual(["initialize", "tools/list"]);
    expect(await shardDb("eu1").select().from(mcpServers).where(eq(mcpServers.businessId, business.id))).toEqual([]);
  });

  it("refuses a url that is not a public https address, and answers 401 without a key", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    await expectError(await registerServer(apiKey, {}), 400, 'The field "url" is required.', {
      code: "parameter_missing",
      param: "url",
    });
    const refused = await registerServer(apiKey, { url: "https://10.1.2.3/mcp" });
    await expect(refused).toHaveStatus(400);
    expect((await json<{ param: string }>(refused)).param).toBe("url");
    await expectMissingCredential(
      await call("/api/v1/mcp-servers", { method: "POST", body: { url: "https://a.example" } }),
    );
  });

  it("reads and deletes a server within its business only, its actions and calls with it", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    const other = await createBusiness({ shard: "eu1" });
    const box = mcpBox("delete");
    await box.offer({ tools: [usableTool("check_stock")] });
    const server = await registered(apiKey, { url: box.url("stateless") });
    const theirs = await registered(other.apiKey, { url: box.url("stateless") });
    const mine = await json<{ data: McpServerAnswer[] }>(await call("/api/v1/mcp-servers", { key: apiKey }));
    expect(mine.data.map((item) => item.id)).toEqual([server.id]);
    for (const path of [`/api/v1/mcp-servers/${theirs.id}`, "/api/v1/mcp-servers/x"]) {
      await expectError(await call(path, { key: apiKey }), 404, "No MCP server with that id exists for this business.");
      await expectError(await call(path, { key: apiKey, method: "DELETE" }), 404, /No MCP server/);
    }
    await expect(await call(`/api/v1/mcp-servers/${server.id}`, { key: apiKey, method: "DELETE" })).toHaveStatus(204);
    const actionId = server.tools[0]?.actionId ?? 0;
    expect(await shardDb("eu1").select().from(actions).where(eq(actions.id, actionId))).toEqual([]);
    await expectError(await call(`/api/v1/actions/${actionId}`, { key: apiKey }), 404, /No action/);
    await expect(await call(`/api/v1/mcp-servers/${theirs.id}`, { key: other.apiKey })).toHaveStatus(200);
  });

  it("refuses a PATCH or a secret rotation of a tool's action: the server defines it", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("patch");
    await box.offer({ tools: [usableTool("check_stock")] });
    const server = await registered(apiKey, { url: box.url("stateless") });
    const id = server.tools[0]?.actionId;
    for (const [path, body] of [
      [`/api/v1/actions/${id}`, { title: "Renamed" }],
      [`/api/v1/actions/${id}/rotate-secret`, {}],
    ] as const) {
      const method = path.endsWith("rotate-secret") ? "POST" : "PATCH";
      await expectError(await call(path, { key: apiKey, method, body }), 409, /is a tool of an MCP server/, {
        code: "invalid_state",
      });
    }
  });

  it("allows at most 10 servers a business", async () => {
    const { apiKey } = await createBusiness({ shard: "eu1" });
    const box = mcpBox("servers");
    const responses = await Promise.all(
      Array.from({ length: 11 }, () => registerServer(apiKey, { url: box.url("stateless") })),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([...Array(10).fill(201), 403]);
    const refused = responses.find((response) => response.status === 403) ?? new Response(null, { status: 500 });
    await expectError(refused, 403, /at most 10 MCP servers/, { code: "limit_reached" });
  });
});
