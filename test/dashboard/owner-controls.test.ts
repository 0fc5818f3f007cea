import { and, eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import {
  actionCalls,
  actions,
  apiKeys,
  intakes,
  knowledgeItems,
  oauthGrants,
  webhookDeliveries,
  webhookEndpoints,
} from "../../src/db/schema";
import { registerAction } from "../helpers/actions";
import { formsPostingTo, page, post, signedIn, submit, testIdText } from "../helpers/dashboard";
import { createApiKey, db } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { intakeBody, postIntake } from "../helpers/intakes";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import { attemptsOf, consume, deliveryRow, outboxOnly, subscribe } from "../helpers/webhooks";

// docs/architecture.md, Principals and owner sides: the owner can remove any webhook endpoint, action or pushed text in
// the dashboard, whoever created it, and sees before revoking a key or disconnecting an app what will stop and what
// remains; and each delivery in an endpoint's history shows its attempts and can be sent again.

const endpointRow = (id: number) => db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();
const deliveriesOf = (endpointId: number) =>
  db.select().from(webhookDeliveries).where(eq(webhookDeliveries.endpointId, endpointId));
const NOT_FROM_DASHBOARD = "This form was not sent from your dashboard";

async function pushText(credential: string, key: string, title: string) {
  const pushed = await call(`/api/v1/knowledge/${key}`, {
    key: credential,
    method: "PUT",
    body: { title, content: `${title}: closed on public holidays, open again the day after.` },
  });
  await expect(pushed).toHaveStatus(201);
}

describe("removing a webhook endpoint from the dashboard", async () => {
  const mine = await createOwnerBusiness();
  const theirs = await createOwnerBusiness();
  const jar = await signedIn(mine);
  const app = await connectApp(mine);

  it("removes an app's endpoint after a confirmation naming its pending deliveries, which are then never sent", async () => {
    const box = receiverBox("removed");
    const endpoint = await subscribe(app.tokens.access_token, box.url("/hooks"));
    // Two deliveries written to the outbox and not yet sent: what the confirmation counts and the removal stops.
    const { deliveryIds } = await outboxOnly(mine.business, [
      { event: "lead.created", data: { n: 1 } },
      { event: "lead.created", data: { n: 2 } },
    ]);
    const pendingHere = (await deliveriesOf(endpoint.id)).map((delivery) => delivery.id);
    expect(pendingHere).toHaveLength(2);

    const endpointPage = await page(jar, `/dashboard/webhooks/${endpoint.id}`);
    expect(endpointPage.html).toContain(`href="/dashboard/webhooks/${endpoint.id}/remove"`);
    expect(endpointPage.html).toContain(`Added by the app ${app.client.client_name}`);

    const confirmation = await page(jar, `/dashboard/webhooks/${endpoint.id}/remove`);
    await expect(confirmation).toHaveStatus(200);
    expect(confirmation.html).toContain(box.url("/hooks"));
    expect(testIdText(confirmation.html, "stops")).toContain(
      "2 deliveries that are still waiting to be sent will not be sent.",
    );
    expect(formsPostingTo(confirmation.html, `/dashboard/webhooks/${endpoint.id}/remove`)).toBe(1);
    // Nothing changes until the owner confirms.
    expect(await endpointRow(endpoint.id)).toBeDefined();

    const removed = await submit(
      jar,
      `/dashboard/webhooks/${endpoint.id}/remove`,
      `/dashboard/webhooks/${endpoint.id}/remove`,
    );
    await expect(removed).toHaveStatus(303);
    expect(removed.headers.get("Location")).toBe("/dashboard/webhooks");
    expect(await endpointRow(endpoint.id)).toBeUndefined();
    expect(await deliveriesOf(endpoint.id)).toEqual([]);

    // A message already on the queue for one of them: the consumer finds nothing, acks, and sends nothing.
    for (const id of pendingHere) {
      expect(deliveryIds).toContain(id);
      expect(await consume(id, Date.now())).toEqual({ acked: true, retryDelay: undefined });
    }
    expect(await box.recorded()).toEqual([]);
    expect((await page(jar, "/dashboard/webhooks")).html).not.toContain(box.url("/hooks"));
  });

  it("removes an endpoint created with an API key just the same", async () => {
    const endpoint = await subscribe(mine.apiKey, receiverBox("key-side").url("/hooks"));
    const confirmation = await page(jar, `/dashboard/webhooks/${endpoint.id}/remove`);
    expect(confirmation.html).toContain("Added with an API key");
    expect(testIdText(confirmation.html, "stops")).toContain("No delivery is waiting to be sent to it.");
    const path = `/dashboard/webhooks/${endpoint.id}/remove`;
    await expect(await submit(jar, path, path)).toHaveStatus(303);
    expect(await endpointRow(endpoint.id)).toBeUndefined();
  });

  it("shows another business's endpoint as not found, and removes nothing of theirs", async () => {
    const endpoint = await subscribe(theirs.apiKey, "https://partner.example/theirs");
    const confirmation = await page(jar, `/dashboard/webhooks/${endpoint.id}/remove`);
    await expect(confirmation).toHaveStatus(404);
    expect(confirmation.html).toContain("No webhook endpoint with that id exists for this business.");
    const removed = await submit(jar, "/dashboard", `/dashboard/webhooks/${endpoint.id}/remove`);
    await expect(removed).toHaveStatus(404);
    expect(await endpointRow(endpoint.id)).toBeDefined();
  });

  it("refuses the removal without the session's CSRF token", async () => {
    const endpoint = await subscribe(mine.apiKey, "https://partner.example/kept");
    const refused = await post(jar, `/dashboard/webhooks/${endpoint.id}/remove`);
    await expect(refused).toHaveStatus(403);
    expect(await refused.text()).toContain(NOT_FROM_DASHBOARD);
    expect(await endpointRow(endpoint.id)).toBeDefined();
  });
});

describe("sending a delivery again from an endpoint's history", async () => {
  const mine = await createOwnerBusiness();
  const theirs = await createOwnerBusiness();
  const jar = await signedIn(mine);
  const box = receiverBox("again");
  const endpoint = await subscribe(mine.apiKey, box.url("/hooks"), ["lead.created"]);
  const other = await subscribe(mine.apiKey, receiverBox("other").url("/hooks"), ["lead.created"]);

  /** A lead.created delivery to `endpoint`, sent once by the real consumer (so: delivered, with one attempt). */
  async function deliveredOnce() {
    const { emitted, deliveryIds } = await outboxOnly(mine.business, [
      { event: "lead.created", data: { name: "Ana" } },
    ]);
    const rows = await Promise.all(deliveryIds.map(deliveryRow));
    const delivery = rows.find((row) => row?.endpointId === endpoint.id);
    if (!delivery) throw new Error("no delivery to the endpoint");
    await consume(delivery.id, Date.now());
    expect((await deliveryRow(delivery.id))?.status).toBe("delivered");
    return { eventId: emitted[0]?.id ?? "", delivery };
  }

  it("makes one more attempt of the same delivery, through the queue, recorded in its history", async () => {
    const { eventId, delivery } = await deliveredOnce();
    const history = await page(jar, `/dashboard/webhooks/${endpoint.id}`);
    const action = `/dashboard/webhooks/${endpoint.id}/deliveries/${delivery.id}/send-again`;
    expect(formsPostingTo(history.html, action)).toBe(1);
    const before = (await deliveriesOf(endpoint.id)).length;

    const sent = await submit(jar, `/dashboard/webhooks/${endpoint.id}`, action);
    await expect(sent).toHaveStatus(303);
    expect(sent.headers.get("Location")).toBe(`/dashboard/webhooks/${endpoint.id}`);

    // No new delivery: the same one, with the same X-Service-Delivery, sent once more by the real consumer.
    expect((await deliveriesOf(endpoint.id)).length).toBe(before);
    const requests = await box.arrived(2);
    expect(requests.map((request) => JSON.parse(request.body).id)).toEqual([eventId, eventId]);
    expect(requests.map((request) => request.headers["x-service-delivery"])).toEqual([
      String(delivery.id),
      String(delivery.id),
    ]);
    await vi.waitFor(async () => expect(await attemptsOf(delivery.id)).toHaveLength(2));
    // The extra attempt starts no schedule: the delivery stays delivered, its scheduled count unchanged.
    expect(await deliveryRow(delivery.id)).toMatchObject({ status: "delivered", attemptCount: 1 });
  });

  it("answers the not-found page for a delivery of another business or of another endpoint, sending nothing", async () => {
    const { delivery } = await deliveredOnce();
    const theirEndpoint = await subscribe(theirs.apiKey, "https://partner.example/theirs", ["lead.created"]);
    const [theirDeliveryId] = (await outboxOnly(theirs.business, [{ event: "lead.created", data: {} }])).deliveryIds;
    const before = await db.$count(webhookDeliveries, eq(webhookDeliveries.businessId, theirs.business.id));
    const mineBefore = await db.$count(webhookDeliveries, eq(webhookDeliveries.businessId, mine.business.id));
    for (const path of [
      `/dashboard/webhooks/${theirEndpoint.id}/deliveries/${theirDeliveryId}/send-again`,
      `/dashboard/webhooks/${endpoint.id}/deliveries/${theirDeliveryId}/send-again`,
      // One of mine, under the wrong endpoint.
      `/dashboard/webhooks/${other.id}/deliveries/${delivery.id}/send-again`,
      `/dashboard/webhooks/${endpoint.id}/deliveries/abc/send-again`,
    ]) {
      const refused = await submit(jar, "/dashboard", path);
      await expect(refused, path).toHaveStatus(404);
      expect(await refused.text()).toMatch(/No (delivery|webhook endpoint) with that id exists/);
    }
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.businessId, theirs.business.id))).toBe(before);
    expect(await db.$count(webhookDeliveries, eq(webhookDeliveries.businessId, mine.business.id))).toBe(mineBefore);
  });

  it("refuses a Send again without the session's CSRF token, making no delivery", async () => {
    const { delivery } = await deliveredOnce();
    const before = (await deliveriesOf(endpoint.id)).length;
    const refused = await post(jar, `/dashboard/webhooks/${endpoint.id}/deliveries/${delivery.id}/send-again`);
    await expect(refused).toHaveStatus(403);
    expect((await deliveriesOf(endpoint.id)).length).toBe(before);
  });
});

describe("removing an action from the dashboard", async () => {
  const mine = await createOwnerBusiness();
  const theirs = await createOwnerBusiness();
  const jar = await signedIn(mine);
  const app = await connectApp(mine);

  it("removes an app's action, with its calls, after a confirmation", async () => {
    const action = await registerAction(app.tokens.access_token, "app_stock", {
      url: receiverBox("action").url("/ok"),
    });
    // One call on record (the owner's Test), so that its history is there to go with it.
    const tested = await submit(jar, `/dashboard/actions/${action.id}`, `/dashboard/actions/${action.id}/test`, {
      arguments: "{}",
    });
    await expect(tested).toHaveStatus(200);
    expect(await db.$count(actionCalls, eq(actionCalls.actionId, action.id))).toBe(1);

    const actionPage = await page(jar, `/dashboard/actions/${action.id}`);
    expect(actionPage.html).toContain(`href="/dashboard/actions/${action.id}/remove"`);
    expect(actionPage.html).toContain(`Added by the app ${app.client.client_name}`);
    const confirmation = await page(jar, `/dashboard/actions/${action.id}/remove`);
    await expect(confirmation).toHaveStatus(200);
    expect(testIdText(confirmation.html, "stops")).toContain("The Secretary no longer calls it");
    expect(await db.$count(actions, eq(actions.id, action.id))).toBe(1);

    const path = `/dashboard/actions/${action.id}/remove`;
    const removed = await submit(jar, path, path);
    await expect(removed).toHaveStatus(303);
    expect(removed.headers.get("Location")).toBe("/dashboard/actions");
    expect(await db.$count(actions, eq(actions.id, action.id))).toBe(0);
    expect(await db.$count(actionCalls, eq(actionCalls.actionId, action.id))).toBe(0);
    await expect(await call(`/api/v1/actions/${action.id}`, { key: app.tokens.access_token })).toHaveStatus(404);
  });

  it("removes an action registered with an API key just the same", async () => {
    const action = await registerAction(mine.apiKey, "key_stock");
    const path = `/dashboard/actions/${action.id}/remove`;
    expect((await page(jar, path)).html).toContain("Added with an API key");
    await expect(await submit(jar, path, path)).toHaveStatus(303);
    expect(await db.$count(actions, eq(actions.id, action.id))).toBe(0);
  });

  it("shows another business's action as not found, refuses a post without CSRF, and removes nothing", async () => {
    const theirAction = await registerAction(theirs.apiKey, "their_stock");
    const confirmation = await page(jar, `/dashboard/actions/${theirAction.id}/remove`);
    await expect(confirmation).toHaveStatus(404);
    expect(confirmation.html).toContain("No action with that id exists for this business.");
    await expect(await submit(jar, "/dashboard", `/dashboard/actions/${theirAction.id}/remove`)).toHaveStatus(404);
    expect(await db.$count(actions, eq(actions.id, theirAction.id))).toBe(1);

    const mineToKeep = await registerAction(mine.apiKey, "kept_stock");
    const refused = await post(jar, `/dashboard/actions/${mineToKeep.id}/remove`);
    await expect(refused).toHaveStatus(403);
    expect(await db.$count(actions, eq(actions.id, mineToKeep.id))).toBe(1);
  });
});

describe("removing a pushed text, whoever pushed it", async () => {
  const mine = await createOwnerBusiness();
  const jar = await signedIn(mine);
  const app = await connectApp(mine);

  it("removes a text pushed by an app and one pushed with an API key", async () => {
    await pushText(app.tokens.access_token, "app-hours", "App hours");
    await pushText(mine.apiKey, "key-hours", "Key hours");
    for (const key of ["app-hours", "key-hours"]) {
      const removed = await submit(jar, "/dashboard/knowledge", "/dashboard/knowledge/pushed/remove", { key });
      await expect(removed).toHaveStatus(303);
    }
    expect(await db.$count(knowledgeItems, eq(knowledgeItems.businessId, mine.business.id))).toBe(0);
  });
});

describe("revoking a key: what stops and what remains, then the confirmation", async () => {
  const mine = await createOwnerBusiness();
  const theirs = await createOwnerBusiness();
  const jar = await signedIn(mine);
  const first = await db.select().from(apiKeys).where(eq(apiKeys.businessId, mine.business.id)).get();
  if (!first) throw new Error("no key");
  const second = await createApiKey(mine.business.id);
  // What the first key created: an intake (its own), an endpoint and an action (the API keys' side), a text.
  const intake = await json<{ id: number; name: string }>(await postIntake(mine.apiKey, intakeBody()));
  const endpointUrl = receiverBox("key-side").url("/hooks");
  const endpoint = await subscribe(mine.apiKey, endpointUrl);
  const action = await registerAction(mine.apiKey, "key_lookup");
  await pushText(mine.apiKey, "opening-hours", "Opening hours");
  const path = `/dashboard/keys/${first.id}/revoke`;

  it("leads from the keys page to the confirmation by a link, not a form", async () => {
    const keys = await page(jar, "/dashboard/keys");
    expect(keys.html).toContain(`href="${path}"`);
    expect(formsPostingTo(keys.html, path)).toBe(0);
  });

  it("says the key's intakes switch off and the endpoints keep receiving while another key remains", async () => {
    const confirmation = await page(jar, path);
    await expect(confirmation).toHaveStatus(200);
    const stops = testIdText(confirmation.html, "stops");
    expect(stops).toContain("Every request made with this key is refused");
    expect(stops).toContain(intake.name);
    expect(stops).toContain("1 other active key remains: the webhook endpoints created with API keys keep receiving");
    expect(stops).not.toContain(endpointUrl);
    const remains = testIdText(confirmation.html, "remains");
    expect(remains).toContain(endpointUrl);
    expect(remains).toContain(action.name);
    expect(remains).toContain("Opening hours");
    expect(formsPostingTo(confirmation.html, path)).toBe(1);
  });

  it("says the endpoints are removed, with their URLs, when it is the last active key; confirming revokes it", async () => {
    // The other key revoked first: the first one is now the business's last.
    await expect(await submit(jar, "/dashboard/keys", `/dashboard/keys/${second.apiKeyId}/revoke`)).toHaveStatus(303);
    const confirmation = await page(jar, path);
    const stops = testIdText(confirmation.html, "stops");
    expect(stops).toContain("This is the business's last active API key");
    expect(stops).toContain(endpointUrl);
    expect(testIdText(confirmation.html, "remains")).not.toContain(endpointUrl);

    const revoked = await submit(jar, path, path);
    await expect(revoked).toHaveStatus(303);
    expect(revoked.headers.get("Location")).toBe("/dashboard/keys");
    await expect(await call("/api/v1/me", { key: mine.apiKey })).toHaveStatus(401);
    expect((await db.select().from(intakes).where(eq(intakes.id, intake.id)).get())?.enabled).toBe(false);
    expect(await db.$count(webhookEndpoints, eq(webhookEndpoints.id, endpoint.id))).toBe(0);
    expect(await db.$count(actions, eq(actions.id, action.id))).toBe(1);

    const after = await page(jar, path);
    expect(after.html).toContain("This key was revoked on");
    expect(formsPostingTo(after.html, path)).toBe(0);
  });

  it("shows another business's key as not found, and refuses a post without CSRF", async () => {
    const theirKey = await db.select().from(apiKeys).where(eq(apiKeys.businessId, theirs.business.id)).get();
    const confirmation = await page(jar, `/dashboard/keys/${theirKey?.id}/revoke`);
    await expect(confirmation).toHaveStatus(404);
    expect(confirmation.html).toContain("No API key with that id exists for this business.");
    const kept = await createApiKey(mine.business.id);
    await expect(await post(jar, `/dashboard/keys/${kept.apiKeyId}/revoke`)).toHaveStatus(403);
    await expect(await call("/api/v1/me", { key: kept.apiKey })).toHaveStatus(200);
  });
});

describe("disconnecting an app: what stops and what remains, then the confirmation", async () => {
  const mine = await createOwnerBusiness();
  const theirs = await createOwnerBusiness();
  const jar = await signedIn(mine);
  const app = await connectApp(mine);
  const token = app.tokens.access_token;
  const intake = await json<{ id: number; name: string }>(await postIntake(token, intakeBody()));
  const endpointUrl = receiverBox("app-side").url("/hooks");
  const endpoint = await subscribe(token, endpointUrl);
  const action = await registerAction(token, "app_lookup");
  await pushText(token, "app-prices", "Prices from the app");
  const path = `/dashboard/apps/${app.grantId}/disconnect`;

  it("lists the app's intakes, endpoints, actions and texts, then disconnects it on confirmation", async () => {
    const apps = await page(jar, "/dashboard/apps");
    expect(apps.html).toContain(`href="${path}"`);
    expect(formsPostingTo(apps.html, path)).toBe(0);

    const confirmation = await page(jar, path);
    await expect(confirmation).toHaveStatus(200);
    expect(confirmation.html).toContain(`Disconnect ${app.client.client_name}?`);
    const stops = testIdText(confirmation.html, "stops");
    expect(stops).toContain("every token it holds is refused");
    expect(stops).toContain(intake.name);
    expect(stops).toContain(endpointUrl);
    const remains = testIdText(confirmation.html, "remains");
    expect(remains).toContain(action.name);
    expect(remains).toContain("Prices from the app");
    expect(remains).toContain("marked as from a disconnected app");

    const disconnected = await submit(jar, path, path);
    await expect(disconnected).toHaveStatus(303);
    expect(disconnected.headers.get("Location")).toBe("/dashboard/apps");
    await expect(await call("/api/v1/me", { key: token })).toHaveStatus(401);
    expect(
      (await db.select().from(oauthGrants).where(eq(oauthGrants.id, app.grantId)).get())?.revokedAt,
    ).not.toBeNull();
    expect((await db.select().from(intakes).where(eq(intakes.id, intake.id)).get())?.enabled).toBe(false);
    expect(await db.$count(webhookEndpoints, eq(webhookEndpoints.id, endpoint.id))).toBe(0);

    const after = await page(jar, path);
    expect(after.html).toContain("This app was disconnected on");
    expect(formsPostingTo(after.html, path)).toBe(0);
  });

  it("marks the disconnected app's actions and texts in the dashboard's lists", async () => {
    const actionsPage = await page(jar, "/dashboard/actions");
    const row = actionsPage.html.split("<tr>").find((part) => part.includes(`<code>${action.name}</code>`)) ?? "";
    expect(row).toContain(`Added by the app ${app.client.client_name}`);
    expect(row).toContain("disconnected app");
    const keyAction = await registerAction(mine.apiKey, "key_action");
    const keyRow =
      (await page(jar, "/dashboard/actions")).html
        .split("<tr>")
        .find((part) => part.includes(`<code>${keyAction.name}</code>`)) ?? "";
    expect(keyRow).not.toContain("disconnected app");
    expect((await page(jar, `/dashboard/actions/${action.id}`)).html).toContain("disconnected app");

    const knowledge = await page(jar, "/dashboard/knowledge");
    const textRow = knowledge.html.split("<tr>").find((part) => part.includes("<code>app-prices</code>")) ?? "";
    expect(textRow).toContain("disconnected app");
  });

  it("shows another business's connection as not found, and refuses a post without CSRF", async () => {
    const theirApp = await connectApp(theirs);
    const confirmation = await page(jar, `/dashboard/apps/${theirApp.grantId}/disconnect`);
    await expect(confirmation).toHaveStatus(404);
    expect(confirmation.html).toContain("No connected app with that id exists for this business.");
    const kept = await connectApp(mine);
    await expect(await post(jar, `/dashboard/apps/${kept.grantId}/disconnect`)).toHaveStatus(403);
    await expect(await call("/api/v1/me", { key: kept.tokens.access_token })).toHaveStatus(200);
    expect(
      await db.$count(
        oauthGrants,
        and(eq(oauthGrants.id, theirApp.grantId), eq(oauthGrants.businessId, theirs.business.id)),
      ),
    ).toBe(1);
  });
});
