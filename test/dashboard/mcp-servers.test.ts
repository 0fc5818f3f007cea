import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { actions } from "../../src/db/schema";
import { NO_LONGER_LISTED, NOT_OFFERED } from "../../src/domain/actions/mcp-servers";
import { formsPostingTo, page, signedIn, submit, switchActionOn, testIdText } from "../helpers/dashboard";
import { shardDb } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { type McpServerAnswer, mcpBox, registered, usableTool } from "../helpers/mcp-servers";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";

// docs/guides/connected-actions.md, From an MCP server: the owner's actions page shows each MCP server of the
// business, who added it, when its tools were last listed and why that failed, and its tools: those that are actions
// link to their page, the others say why they are not; an action whose tool left the server cannot be switched on;
// and a change the server made to a switched-on tool waits for the owner as a partner's change does.

const READ_ONLY =
  "The tool does not declare annotations.readOnlyHint: true (and no destructiveHint): a connected action only reads, so only a tool that says it only reads can be one.";
const CHANGED_DESCRIPTION = "Looks up the stock of a product for a customer, by the product code they give.";

const refresh = async (key: string, id: number) => {
  const response = await call(`/api/v1/mcp-servers/${id}/refresh`, { key, method: "POST", body: {} });
  await expect(response).toHaveStatus(200);
  return json<McpServerAnswer>(response);
};

const actionOf = (server: McpServerAnswer, name: string) =>
  server.tools.find((tool) => tool.name === name)?.actionId ?? 0;

async function contextActions(businessId: string) {
  const response = await call(`/internal/v1/businesses/${businessId}/context?channel=whatsapp`, { headers: RUNTIME });
  await expect(response).toHaveStatus(200);
  return (await json<{ actions: { name: string; description: string }[] }>(response)).actions;
}

/** A business with its signed-in owner and a server of its keys offering `check_stock` and `opening_hours`. */
async function shopWithServer(name: string, offer?: string[], shard: "eu1" | "us1" = "eu1") {
  const shop = await createOwnerBusiness({ shard });
  const jar = await signedIn(shop);
  const box = mcpBox(name);
  await box.offer({ tools: [usableTool("check_stock"), usableTool("opening_hours")] });
  const server = await registered(shop.apiKey, { url: box.url(), ...(offer && { tools: offer }) });
  return { shop, jar, box, server };
}

const serverText = async (jar: Awaited<ReturnType<typeof signedIn>>, id: number) =>
  testIdText((await page(jar, "/dashboard/actions")).html, `mcp-server-${id}`);

describe("the MCP servers on the owner's actions page", () => {
  it("shows a server's address, who added it, when its tools were listed, and each tool with its action or reason", async () => {
    const shop = await createOwnerBusiness({ shard: "eu1" });
    const jar = await signedIn(shop);
    const box = mcpBox("owner-view");
    await box.offer({
      tools: [
        usableTool("check_stock"),
        usableTool("opening_hours"),
        usableTool("no_hint", { annotations: {} }),
        usableTool("<img src=x onerror=alert(1)>"),
      ],
    });
    const server = await registered(shop.apiKey, { url: box.url(), tools: ["check_stock"] });
    const stock = actionOf(server, "check_stock");
    const plain = await call("/api/v1/actions", {
      key: shop.apiKey,
      method: "POST",
      body: {
        name: "plain_action",
        title: "Plain action",
        description: "An action registered on its own, not a tool of a server.",
        url: "https://partner.example/plain",
        parameters: { type: "object", properties: {} },
      },
    });
    await expect(plain).toHaveStatus(201);

    const { status, html } = await page(jar, "/dashboard/actions");
    expect(status).toBe(200);
    const section = testIdText(html, `mcp-server-${server.id}`);
    expect(section).toContain(`MCP server ${box.url()}`);
    expect(section).toContain("Added with an API key");
    expect(section).toContain("Tools last listed");
    expect(html).toContain(`<time datetime="${server.listedAt}">`);
    expect(section).not.toContain("That listing failed");
    const tools = testIdText(html, `tools-${server.id}`);
    expect(tools).toContain("Look up check_stock check_stock off");
    expect(tools).toContain(`opening_hours not an action ${NOT_OFFERED}`);
    expect(tools).toContain(`no_hint not an action ${READ_ONLY}`);
    // The partner's tool name is text, never markup.
    expect(tools).toContain("<img src=x onerror=alert(1)> not an action");
    expect(html).not.toContain("<img src=x");
    // The server's action links to its page once, under its server; the plain action stays in the table.
    expect(html.split(`href="/dashboard/actions/${stock}"`)).toHaveLength(2);
    expect(html.indexOf(`href="/dashboard/actions/${stock}"`)).toBeGreaterThan(html.indexOf("MCP server"));
    expect(html.indexOf("Plain action")).toBeLessThan(html.indexOf("MCP server"));
    expect(html).not.toContain("No app has registered an action.");

    const actionPage = (await page(jar, `/dashboard/actions/${stock}`)).html;
    expect(actionPage).toContain(`A tool of the MCP server <code>${box.url()}</code>`);
    expect(formsPostingTo(actionPage, `/dashboard/actions/${stock}/on`)).toBe(1);
  });

  it("names the app that added a server", async () => {
    const shop = await createOwnerBusiness({ shard: "eu1" });
    const jar = await signedIn(shop);
    const app = await connectApp(shop);
    const box = mcpBox("app-view");
    await box.offer({ tools: [usableTool("check_stock")] });
    const server = await registered(app.tokens.access_token, { url: box.url() });
    expect(await serverText(jar, server.id)).toContain(`Added by the app ${app.client.client_name}`);
  });

  it("says that the last listing failed and why, with the tools of the listing before", async () => {
    const { shop, jar, box, server } = await shopWithServer("list-error");
    await box.offer({ tools: [usableTool("check_stock", { title: "x".repeat(17_000) })] });
    const refreshed = await refresh(shop.apiKey, server.id);
    expect(refreshed.listError).toBe("The MCP server did not list its tools: larger than 16000 bytes.");

    const { html } = await page(jar, "/dashboard/actions");
    expect(testIdText(html, `list-error-${server.id}`)).toBe(
      "That listing failed: The MCP server did not list its tools: larger than 16000 bytes. The tools below are those of the last listing that answered.",
    );
    expect(html).toContain(`<time datetime="${refreshed.listedAt}">`);
    expect(testIdText(html, `tools-${server.id}`)).toContain("Look up check_stock check_stock off");
  });

  it("shows an action whose tool left the server as removed, with no Switch on, until the server lists it again", async () => {
    const { shop, jar, box, server } = await shopWithServer("removed");
    const stock = actionOf(server, "check_stock");
    await expect(await switchActionOn(jar, stock)).toHaveStatus(303);
    await box.offer({ tools: [usableTool("opening_hours")] });
    await refresh(shop.apiKey, server.id);

    const tools = testIdText((await page(jar, "/dashboard/actions")).html, `tools-${server.id}`);
    expect(tools).toContain(
      `Look up check_stock check_stock removed from the server ${NO_LONGER_LISTED} It cannot be switched on until the server lists it again.`,
    );
    expect(tools).toContain("Look up opening_hours opening_hours off");
    const path = `/dashboard/actions/${stock}`;
    const actionPage = (await page(jar, path)).html;
    expect(testIdText(actionPage, "tool-removed")).toBe(
      "Its MCP server no longer lists this tool, so it cannot be switched on until the server lists it again.",
    );
    expect(formsPostingTo(actionPage, `${path}/on`)).toBe(0);
    // A form posted anyway is refused in place, and the action stays off.
    const refused = await submit(jar, path, `${path}/on`, { reviewed: "" });
    await expect(refused).toHaveStatus(409);
    expect(await refused.text()).toContain("Its MCP server no longer lists this tool, so it cannot be switched on.");
    const [row] = await shardDb("eu1").select().from(actions).where(eq(actions.id, stock));
    expect(row).toMatchObject({ enabled: false, offReason: "removed" });

    await box.offer({ tools: [usableTool("check_stock"), usableTool("opening_hours")] });
    await refresh(shop.apiKey, server.id);
    expect(await serverText(jar, server.id)).not.toContain("removed from the server");
    expect(formsPostingTo((await page(jar, path)).html, `${path}/on`)).toBe(1);
  });

  it("shows a change the server made to a switched-on tool side by side, the approved one in use until Accept", async () => {
    const { shop, jar, box, server } = await shopWithServer("change-review", ["check_stock"]);
    const stock = actionOf(server, "check_stock");
    const approved = usableTool("check_stock").description;
    await expect(await switchActionOn(jar, stock)).toHaveStatus(303);
    await box.offer({ tools: [usableTool("check_stock", { description: CHANGED_DESCRIPTION })] });
    await refresh(shop.apiKey, server.id);

    const path = `/dashboard/actions/${stock}`;
    const review = testIdText((await page(jar, path)).html, "action-change");
    expect(review).toContain(`Description: “${approved}” → “${CHANGED_DESCRIPTION}”`);
    expect(await contextActions(shop.business.id)).toMatchObject([{ name: "check_stock", description: approved }]);

    const reviewed = /action="[^"]*\/accept"[\s\S]*?name="reviewed" value="([0-9a-f]{64})"/.exec(
      (await page(jar, path)).html,
    )?.[1];
    await expect(await submit(jar, path, `${path}/accept`, { reviewed: reviewed ?? "" })).toHaveStatus(303);
    expect(await contextActions(shop.business.id)).toMatchObject([
      { name: "check_stock", description: CHANGED_DESCRIPTION },
    ]);
    expect((await page(jar, path)).html).not.toContain('data-testid="action-change"');
  });

  it("shows no server of another business, nor its tools' pages", async () => {
    // The owner's business in another shard, with a server of its own: its own shows, the other's does not.
    const mine = await shopWithServer("mine", undefined, "us1");
    const theirs = await shopWithServer("theirs");
    const { html } = await page(mine.jar, "/dashboard/actions");
    expect(html).toContain(`data-testid="mcp-server-${mine.server.id}"`);
    expect(html).toContain(mine.box.url());
    expect(html).not.toContain(theirs.box.url());
    const theirAction = await page(mine.jar, `/dashboard/actions/${actionOf(theirs.server, "check_stock")}`);
    expect(theirAction.status).toBe(404);
  });
});
