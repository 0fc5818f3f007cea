import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { actions, events, webhookDeliveries } from "../../src/db/schema";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { registerAction } from "../helpers/actions";
import { page, signedIn, submit, switchActionOn, testIdText } from "../helpers/dashboard";
import { deps } from "../helpers/dependencies";
import { createApiKey, db } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import { subscribe } from "../helpers/webhooks";

/*
 * docs/decisions.md, When access ends: the pages before revoking a key or disconnecting an app list the actions the
 * Secretary keeps calling and what each call sends; the owner chooses there whether to switch them off (checked by
 * default where the partner's access ends), and the sentence about customer data says exactly what happens. Through
 * the dashboard, the runtime API and the real receiver.
 */

const PARAMETERS = {
  type: "object",
  properties: { sku: { type: "string", description: "The product code" } },
  required: ["sku"],
};

/** An action of `credential` calling the receiver, switched on by the owner. */
async function actionOn(credential: string, jar: Awaited<ReturnType<typeof signedIn>>, name: string) {
  const box = receiverBox(name);
  const response = await call("/api/v1/actions", {
    key: credential,
    method: "POST",
    body: {
      name,
      title: `Stock ${name}`,
      description: "Tells whether a product is in stock today.",
      url: box.url("/ok"),
      parameters: PARAMETERS,
    },
  });
  await expect(response).toHaveStatus(201);
  const { id } = await json<{ id: number }>(response);
  await expect(await switchActionOn(jar, id)).toHaveStatus(303);
  return { id, name, box };
}

const callIt = (businessId: string, name: string) =>
  call(`/internal/v1/businesses/${businessId}/actions/${name}/call`, {
    method: "POST",
    headers: RUNTIME,
    body: { conversation_id: "c-1", message_id: crypto.randomUUID(), channel: "whatsapp", arguments: { sku: "A-1" } },
  });

const enabledOf = async (id: number) => (await db.select().from(actions).where(eq(actions.id, id)).get())?.enabled;

const checkbox = (html: string) =>
  /<input type="checkbox" name="switch_actions_off" value="on"( checked="")?/.exec(html);

describe("disconnecting an app with a switched-on action", () => {
  it("lists the action and what its calls send, offers switching it off (checked), and switches it off with the app", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedIn(shop);
    const app = await connectApp(shop);
    const action = await actionOn(app.tokens.access_token, jar, "app_stock");
    const path = `/dashboard/apps/${app.grantId}/disconnect`;

    const confirmation = await page(jar, path);
    const called = testIdText(confirmation.html, "actions-called");
    expect(called).toContain("keeps calling them unless you switch them off below");
    // Tags become spaces in testIdText: "<code>app_stock</code>: each" reads "app_stock : each".
    expect(called).toContain("app_stock : each call sends sku (The product code), with your business's id and handle");
    expect(checkbox(confirmation.html)?.[1]).toBe(' checked=""');
    const data = testIdText(confirmation.html, "customer-data");
    expect(data).toContain("With its actions switched off below, no customer data is sent to the app any more");
    expect(data).toContain("If you keep them on, they keep receiving what customers ask in chats");
    expect(testIdText(confirmation.html, "stops")).not.toContain("No customer data is sent to it any more.");

    await expect(await submit(jar, path, path, { switch_actions_off: "on" })).toHaveStatus(303);
    expect(await enabledOf(action.id)).toBe(false);
    const refused = await callIt(shop.business.id, action.name);
    await expect(refused).toHaveStatus(409);
    expect(await action.box.recorded()).toEqual([]);
    const context = await call(`/internal/v1/businesses/${shop.business.id}/context?channel=whatsapp`, {
      headers: RUNTIME,
    });
    expect((await json<{ actions: unknown[] }>(context)).actions).toEqual([]);
  });

  it("keeps the action on when the owner unchecks the choice, and it keeps receiving calls, as the page said", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedIn(shop);
    const app = await connectApp(shop);
    const action = await actionOn(app.tokens.access_token, jar, "kept_stock");
    const path = `/dashboard/apps/${app.grantId}/disconnect`;

    await expect(await submit(jar, path, path)).toHaveStatus(303);
    await expect(await call("/api/v1/me", { key: app.tokens.access_token })).toHaveStatus(401);
    expect(await enabledOf(action.id)).toBe(true);
    const called = await callIt(shop.business.id, action.name);
    expect(await json(called)).toMatchObject({ call: { status: "success" } });
    const [request] = await action.box.arrived(1);
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({ action: "kept_stock", arguments: { sku: "A-1" } });
  });

  it("says no customer data is sent any more, with no choice to make, when none of its actions is on", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedIn(shop);
    const app = await connectApp(shop);
    await registerAction(app.tokens.access_token, "never_on");
    const confirmation = await page(jar, `/dashboard/apps/${app.grantId}/disconnect`);
    expect(testIdText(confirmation.html, "actions-called")).toBe(
      "The app has no action switched on: the Secretary calls none of them.",
    );
    expect(testIdText(confirmation.html, "customer-data")).toBe(
      "No customer data is sent to the app any more: no webhook events, and no action is switched on.",
    );
    expect(checkbox(confirmation.html)).toBeNull();
  });
});

describe("revoking a key while the API keys' actions are on", () => {
  it("on the last key, offers switching them off checked, and does so in the revocation", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedIn(shop);
    const action = await actionOn(shop.apiKey, jar, "last_key_stock");
    const key = await db.query.apiKeys.findFirst({ where: (k, { eq }) => eq(k.businessId, shop.business.id) });
    const path = `/dashboard/keys/${key?.id}/revoke`;

    const confirmation = await page(jar, path);
    expect(testIdText(confirmation.html, "actions-called")).toContain("last_key_stock : each call sends sku");
    expect(checkbox(confirmation.html)?.[1]).toBe(' checked=""');
    await expect(await submit(jar, path, path, { switch_actions_off: "on" })).toHaveStatus(303);
    expect(await enabledOf(action.id)).toBe(false);
    await expect(await callIt(shop.business.id, action.name)).toHaveStatus(409);
  });

  it("while other keys remain, offers it unchecked; chosen, the keys' endpoint hears action.disabled (credential_revoked)", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedIn(shop);
    const second = await createApiKey(shop.business.id);
    const box = receiverBox("keys-side");
    await subscribe(second.apiKey, box.url("/hooks"));
    const action = await actionOn(shop.apiKey, jar, "rotated_stock");
    await box.arrived(1);
    const path = `/dashboard/keys/${second.apiKeyId}/revoke`;

    const confirmation = await page(jar, path);
    expect(checkbox(confirmation.html)?.[1]).toBeUndefined();
    expect(testIdText(confirmation.html, "customer-data")).toContain(
      "its switched-on actions keep receiving what customers ask in chats unless you switch them off below",
    );
    await expect(await submit(jar, path, path, { switch_actions_off: "on" })).toHaveStatus(303);
    expect(await enabledOf(action.id)).toBe(false);
    const [, disabled] = await box.arrived(2);
    expect(JSON.parse(disabled?.body ?? "{}")).toMatchObject({
      event: "action.disabled",
      data: { action: { id: action.id, enabled: false }, reason: "credential_revoked" },
    });
  });

  it("while other keys remain, leaves the actions on when the owner keeps the choice unchecked", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedIn(shop);
    const second = await createApiKey(shop.business.id);
    const action = await actionOn(shop.apiKey, jar, "still_on_stock");
    const path = `/dashboard/keys/${second.apiKeyId}/revoke`;
    await expect(await submit(jar, path, path)).toHaveStatus(303);
    expect(await enabledOf(action.id)).toBe(true);
  });
});

describe("revoking a key at the maxima of docs/architecture.md, Principals and owner sides: 10 actions on, 20 endpoints", () => {
  it("switches all 10 off in the revocation and tells each of the 20 keys' endpoints of each: 200 deliveries", async () => {
    const shop = await createOwnerBusiness({ plan: "business" });
    const jar = await signedIn(shop);
    const second = await createApiKey(shop.business.id);
    const box = receiverBox("max-actions");
    for (let i = 0; i < 20; i++) await subscribe(second.apiKey, box.url(`/hooks/${i}`), ["action.disabled"]);
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) {
      const { id } = await registerAction(shop.apiKey, `stock_${i}`);
      await switchAction(deps, shop.business.id, id, true);
      ids.push(id);
    }
    const path = `/dashboard/keys/${second.apiKeyId}/revoke`;
    await expect(await submit(jar, path, path, { switch_actions_off: "on" })).toHaveStatus(303);

    const rows = await db.select().from(actions).where(eq(actions.businessId, shop.business.id));
    expect(rows.map((row) => row.enabled)).toEqual(Array(10).fill(false));
    const disabled = await db
      .select()
      .from(events)
      .where(and(eq(events.businessId, shop.business.id), eq(events.type, "action.disabled")));
    expect(disabled).toHaveLength(10);
    const deliveries = await db
      .select()
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.businessId, shop.business.id));
    expect(deliveries).toHaveLength(200);
    const received = await box.arrived(200, 30_000);
    const pairs = new Set(received.map((request) => `${request.path} ${JSON.parse(request.body).data.action.id}`));
    expect(pairs.size).toBe(200);
    expect(received.every((request) => JSON.parse(request.body).data.reason === "credential_revoked")).toBe(true);
    expect(new Set(received.map((request) => JSON.parse(request.body).data.action.id))).toEqual(new Set(ids));
  });
});
