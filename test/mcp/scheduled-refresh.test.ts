import { and, eq, inArray } from "drizzle-orm";
import { afterEach, describe, expect, it } from "vitest";
import { actions, businesses, events, mcpServers } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { REFRESH_AFTER_MS, refreshDueMcpServers } from "../../src/domain/actions/mcp-refresh";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { iso } from "../../src/lib/time";
import { runScheduled } from "../helpers/cron";
import { shardDependencies, testDependencies } from "../helpers/dependencies";
import { createBusiness, shardDb } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { mcpBox, registered, usableTool } from "../helpers/mcp-servers";

/*
 * docs/guides/connected-actions.md, From an MCP server, When your tools change: the cron lists a server's tools again
 * once they are more than 6 hours old, at most 3 servers of a shard a run, the oldest listed first, and pins what the
 * owner switched on as a partner's refresh does. The refresh reads every server of a shard, so this file runs in a
 * runtime of its own (vitest.config.ts).
 */

const MINUTE = 60_000;
const REWRITTEN = "Looks up the stock of one product in every store of the business, for a customer who asks.";

/** A server of a new business in `shard`, with a switched-on tool, listed at `listedAt` (ms). */
async function serverListedAt(
  listedAt: number,
  shard: ShardName = "eu1",
  kind: "stateless" | "sessions" = "stateless",
) {
  const { apiKey, business } = await createBusiness({ shard });
  const box = mcpBox(`scheduled-${shard}`);
  await box.offer({ tools: [usableTool("check_stock"), usableTool("check_price")] });
  const server = await registered(apiKey, { url: box.url(kind) });
  const idOf = (name: string) => server.tools.find((tool) => tool.name === name)?.actionId ?? 0;
  await switchAction(shardDependencies(shard), business.id, idOf("check_stock"), true);
  await switchAction(shardDependencies(shard), business.id, idOf("check_price"), true);
  await shardDb(shard)
    .update(mcpServers)
    .set({ listedAt: iso(listedAt) })
    .where(eq(mcpServers.id, server.id));
  const row = async () => shardDb(shard).select().from(mcpServers).where(eq(mcpServers.id, server.id)).get();
  const actionRow = async (name: string) =>
    shardDb(shard)
      .select()
      .from(actions)
      .where(eq(actions.id, idOf(name)))
      .get();
  return { apiKey, business, box, server, shard, idOf, row, actionRow };
}
type Listed = Awaited<ReturnType<typeof serverListedAt>>;

const listedAtOf = async (servers: Listed[]) =>
  Promise.all(servers.map(async (server) => (await server.row())?.listedAt));

/** The server's tool check_stock rewritten, check_price gone: what a refresh pins and switches off. */
const changeTools = (server: Listed) =>
  server.box.offer({ tools: [{ ...usableTool("check_stock"), description: REWRITTEN }] });

async function expectPinned(server: Listed) {
  expect(await server.actionRow("check_stock")).toMatchObject({
    enabled: true,
    description: REWRITTEN,
    approvedDescription: usableTool("check_stock").description,
  });
  expect(await server.actionRow("check_price")).toMatchObject({ enabled: false, offReason: "removed" });
  const response = await call(`/internal/v1/businesses/${server.business.id}/context?channel=whatsapp`, {
    headers: RUNTIME,
  });
  const { actions: offered } = await json<{ actions: { name: string; description: string }[] }>(response);
  expect(offered).toEqual([
    expect.objectContaining({ name: "check_stock", description: usableTool("check_stock").description }),
  ]);
  const disabled = await shardDb(server.shard)
    .select()
    .from(events)
    .where(and(eq(events.businessId, server.business.id), eq(events.type, "action.disabled")));
  expect(disabled.map((event) => JSON.parse(event.envelope).data)).toEqual([
    expect.objectContaining({ reason: "removed", action: expect.objectContaining({ name: "check_price" }) }),
  ]);
}

// Every test starts from no server: the refresh takes any of a shard's due servers.
afterEach(async () => {
  for (const shard of ["eu1", "us1"] as const) await shardDb(shard).delete(mcpServers);
});

describe("the scheduled refresh, on a driven clock", () => {
  it("refreshes at most 3 servers of a shard a run, the oldest listed first, and leaves one listed recently", async () => {
    const start = Date.now() - 7 * 60 * MINUTE;
    // Made out of order: the run goes by when each was listed, not by id.
    const [third, first, fourth, second, fifth] = await Promise.all(
      [2, 0, 3, 1, 4].map((minutes) => serverListedAt(start + minutes * MINUTE)),
    );
    const recent = await serverListedAt(start + 5 * 60 * MINUTE);
    const byAge = [first, second, third, fourth, fifth] as Listed[];
    for (const server of [...byAge, recent]) await changeTools(server);
    const before = await listedAtOf([...byAge, recent]);

    // Exactly 6 hours after the oldest listing, nothing is due yet.
    await refreshDueMcpServers(testDependencies("eu1", { clock: () => start + REFRESH_AFTER_MS }));
    expect(await listedAtOf([...byAge, recent])).toEqual(before);

    const now = start + REFRESH_AFTER_MS + 30 * MINUTE;
    const deps = testDependencies("eu1", { clock: () => now });
    await refreshDueMcpServers(deps);
    expect(await listedAtOf([...byAge, recent])).toEqual([iso(now), iso(now), iso(now), ...before.slice(3)]);
    for (const server of byAge.slice(0, 3)) await expectPinned(server);
    expect(await fourth?.actionRow("check_stock")).toMatchObject({
      description: usableTool("check_stock").description,
    });

    await refreshDueMcpServers(deps);
    expect(await listedAtOf([...byAge, recent])).toEqual([...Array(5).fill(iso(now)), before[5]]);
    for (const server of byAge.slice(3)) await expectPinned(server);
    expect(await recent.actionRow("check_stock")).toMatchObject({ description: usableTool("check_stock").description });
    expect(await recent.actionRow("check_price")).toMatchObject({ enabled: true, offReason: null });
  });

  it("records a listing that fails and goes on with the others; skips a business being moved", async () => {
    const start = Date.now() - 7 * 60 * MINUTE;
    const [down, moving, up] = await Promise.all([0, 1, 2].map((minutes) => serverListedAt(start + minutes * MINUTE)));
    if (!down || !moving || !up) throw new Error("servers not made");
    await shardDb("eu1")
      .update(mcpServers)
      .set({ url: "http://127.0.0.1:1/mcp" })
      .where(eq(mcpServers.id, down.server.id));
    await shardDb("eu1")
      .update(businesses)
      .set({ movingSince: iso(Date.now()) })
      .where(eq(businesses.id, moving.business.id));
    await changeTools(up);
    const now = start + REFRESH_AFTER_MS + 30 * MINUTE;
    await refreshDueMcpServers(testDependencies("eu1", { clock: () => now }));

    expect(await down.row()).toMatchObject({
      listedAt: iso(now),
      listError: expect.stringMatching(/^The MCP server did not list its tools: /),
    });
    expect(await down.actionRow("check_stock")).toMatchObject({ enabled: true, offReason: null });
    expect((await moving.row())?.listedAt).toBe(iso(start + MINUTE));
    await expectPinned(up);
  });
});

describe("the scheduled refresh, in the Worker's cron run", () => {
  it("refreshes each shard's due servers, 3 of each, over both kinds of MCP server", async () => {
    const hoursAgo = (hours: number) => Date.now() - hours * 60 * MINUTE;
    const eu = await Promise.all(
      [10, 9, 8, 7].map((hours, index) => serverListedAt(hoursAgo(hours), "eu1", index % 2 ? "sessions" : "stateless")),
    );
    const us = await serverListedAt(hoursAgo(7), "us1", "sessions");
    const recent = await serverListedAt(hoursAgo(1), "eu1");
    for (const server of [...eu, us, recent]) await changeTools(server);
    const before = await listedAtOf([...eu, us, recent]);

    await runScheduled();
    const after = await listedAtOf([...eu, us, recent]);
    const refreshed = after.map((listedAt, index) => listedAt !== before[index]);
    expect(refreshed).toEqual([true, true, true, false, true, false]);
    for (const server of [...eu.slice(0, 3), us]) await expectPinned(server);
    await us.box.allSessionsClosed();
    expect(
      await shardDb("eu1")
        .select({ id: actions.id })
        .from(actions)
        .where(
          and(inArray(actions.mcpServerId, [eu[3]?.server.id ?? 0, recent.server.id]), eq(actions.enabled, false)),
        ),
    ).toEqual([]);
  });
});
