import { createExecutionContext, env, waitOnExecutionContext } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, deliveryAttempts, oauthGrants, webhookDeliveries } from "../../src/db/schema";
import worker from "../../src/index";
import { registerAction } from "../helpers/actions";
import { countingD1 } from "../helpers/counting-d1";
import { approveIntake, page, signedIn, submit, switchActionOn, testIdText } from "../helpers/dashboard";
import { createApiKey, db, displayPrefixOf, SHARD_D1_BINDING, shardD1 } from "../helpers/fixtures";
import { BASE, call, json } from "../helpers/http";
import { intakeBody, patchIntake, postIntake } from "../helpers/intakes";
import { connectApp, createOwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import { consume, outboxOnly, subscribe } from "../helpers/webhooks";

// docs/decisions.md, The owner's dashboard: the overview is what needs the owner: actions and intakes waiting for
// approval (and those a partner's change switched off), endpoints whose recent deliveries fail, knowledge sources used
// against the plan's limit, connected apps and when each last called.

const HOUR = 3_600_000;

async function createIntake(credential: string, title: string) {
  const created = await postIntake(credential, intakeBody({ title }));
  await expect(created).toHaveStatus(201);
  return json<{ id: number; name: string }>(created);
}

/** The delivery of `deliveryIds` that goes to `endpointId`. */
async function deliveryTo(endpointId: number, deliveryIds: number[]) {
  for (const id of deliveryIds) {
    const row = await db.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, id)).get();
    if (row?.endpointId === endpointId) return row;
  }
  throw new Error(`no delivery to endpoint ${endpointId}`);
}

/** A delivery finished as failed (its sixth attempt) `agoMs` ago, with that attempt's error on record. */
async function failedAgo(deliveryId: number, agoMs: number, error: string) {
  const at = new Date(Date.now() - agoMs).toISOString();
  await db
    .update(webhookDeliveries)
    .set({ status: "failed", attemptCount: 6, nextAttemptAt: at, completedAt: at })
    .where(eq(webhookDeliveries.id, deliveryId));
  await db.insert(deliveryAttempts).values({ deliveryId, attemptedAt: at, statusCode: null, error, durationMs: 12 });
}

describe("the overview: what needs the owner", async () => {
  const mine = await createOwnerBusiness();
  const theirs = await createOwnerBusiness();
  const jar = await signedIn(mine);

  // Intakes: one new, one a partner's PATCH switched off after approval, one the owner switched off, one of a
  // revoked key (it cannot be switched on again, so it waits for nobody).
  const fresh = await createIntake(mine.apiKey, "Fresh intake");
  const changed = await createIntake(mine.apiKey, "Changed intake");
  await expect(await approveIntake(jar, changed.id)).toHaveStatus(303);
  await expect(await patchIntake(mine.apiKey, changed.id, { title: "Changed intake, renamed" })).toHaveStatus(200);
  const ownerOff = await createIntake(mine.apiKey, "Owner switched off");
  await expect(await approveIntake(jar, ownerOff.id)).toHaveStatus(303);
  const offPath = `/dashboard/intakes/${ownerOff.id}`;
  await expect(await submit(jar, offPath, `${offPath}/off`)).toHaveStatus(303);
  const revokedKey = await createApiKey(mine.business.id);
  await createIntake(revokedKey.apiKey, "Of a revoked key");
  await expect(await submit(jar, "/dashboard/keys", `/dashboard/keys/${revokedKey.apiKeyId}/revoke`)).toHaveStatus(303);
  await createIntake(theirs.apiKey, "Their intake");

  // Actions: one never switched on (listed), one on (not listed), one the owner switched off (not listed), one a
  // partner's new url switched off (listed, as changed).
  const switchOn = async (id: number) => expect(await switchActionOn(jar, id)).toHaveStatus(303);
  const offAction = await registerAction(mine.apiKey, "stock_off", { title: "Stock, off" });
  const onAction = await registerAction(mine.apiKey, "stock_on", { title: "Stock, on" });
  await switchOn(onAction.id);
  const ownerOffAction = await registerAction(mine.apiKey, "stock_owner_off", {
    title: "Stock, switched off by the owner",
  });
  await switchOn(ownerOffAction.id);
  const ownerOffPath = `/dashboard/actions/${ownerOffAction.id}`;
  await expect(await submit(jar, ownerOffPath, `${ownerOffPath}/off`)).toHaveStatus(303);
  const movedAction = await registerAction(mine.apiKey, "stock_moved", { title: "Stock, moved" });
  await switchOn(movedAction.id);
  const moved = await call(`/api/v1/actions/${movedAction.id}`, {
    key: mine.apiKey,
    method: "PATCH",
    body: { url: "https://partner.example/b" },
  });
  expect(await json(moved)).toMatchObject({ enabled: false });

  // Endpoints: one retrying after a 500, one whose delivery failed an hour ago, one that failed two days ago, one
  // healthy; and another business's failing one.
  const urls = {
    retrying: receiverBox("retrying").url("/status/500"),
    failedRecently: receiverBox("recent").url("/hooks"),
    failedLongAgo: receiverBox("long-ago").url("/hooks"),
    healthy: receiverBox("healthy").url("/hooks"),
    theirFailing: receiverBox("theirs").url("/status/503"),
  };
  const retrying = await subscribe(mine.apiKey, urls.retrying, ["lead.created"]);
  const failedRecently = await subscribe(mine.apiKey, urls.failedRecently, ["lead.created"]);
  const failedLongAgo = await subscribe(mine.apiKey, urls.failedLongAgo, ["lead.created"]);
  const healthy = await subscribe(mine.apiKey, urls.healthy, ["lead.created"]);
  const theirFailing = await subscribe(theirs.apiKey, urls.theirFailing, ["lead.created"]);
  const { deliveryIds } = await outboxOnly(mine.business, [{ event: "lead.created", data: {} }]);
  await consume((await deliveryTo(retrying.id, deliveryIds)).id, Date.now());
  await consume((await deliveryTo(healthy.id, deliveryIds)).id, Date.now());
  await failedAgo((await deliveryTo(failedRecently.id, deliveryIds)).id, HOUR, "the connection failed: refused");
  await failedAgo((await deliveryTo(failedLongAgo.id, deliveryIds)).id, 48 * HOUR, "the connection failed: old");
  const theirs503 = await outboxOnly(theirs.business, [{ event: "lead.created", data: {} }]);
  await consume((await deliveryTo(theirFailing.id, theirs503.deliveryIds)).id, Date.now());

  // Knowledge: two texts of the Pro plan's three sources.
  for (const key of ["hours", "prices"]) {
    const pushed = await call(`/api/v1/knowledge/${key}`, {
      key: mine.apiKey,
      method: "PUT",
      body: { title: `About ${key}`, content: `Everything customers ask about ${key}, kept up to date.` },
    });
    await expect(pushed).toHaveStatus(201);
  }

  // Credentials: the fixture's key used at a known time, a key never used, an app used at a known time, an app
  // disconnected (not listed), and the revoked key above (not listed). Set after every request above, which may
  // record a use of their own.
  const usedKey = await db.select().from(apiKeys).where(eq(apiKeys.businessId, mine.business.id)).get();
  if (!usedKey) throw new Error("no key");
  await db.update(apiKeys).set({ lastUsedAt: "2026-03-04T05:06:07.000Z" }).where(eq(apiKeys.id, usedKey.id));
  const unusedKey = await createApiKey(mine.business.id);
  const app = await connectApp(mine);
  await db.update(oauthGrants).set({ lastUsedAt: "2026-05-06T07:08:09.000Z" }).where(eq(oauthGrants.id, app.grantId));
  const gone = await connectApp(mine);
  const disconnectPath = `/dashboard/apps/${gone.grantId}/disconnect`;
  await expect(await submit(jar, disconnectPath, disconnectPath)).toHaveStatus(303);

  const overview = await page(jar, "/dashboard");

  it("lists the intakes and actions never approved and those a partner's change switched off", async () => {
    await expect(overview).toHaveStatus(200);
    const waiting = testIdText(overview.html, "waiting");
    expect(waiting).toContain("Intake Fresh intake : new, never approved");
    expect(waiting).toContain("Intake Changed intake, renamed : changed by the partner since you approved it");
    expect(waiting).not.toContain("Owner switched off");
    expect(waiting).not.toContain("Of a revoked key");
    expect(waiting).not.toContain("Their intake");
    expect(waiting).toContain("Action Stock, off : new, never switched on");
    expect(waiting).toContain("Action Stock, moved : its address was changed by the partner since you switched it on");
    expect(waiting).not.toContain("Stock, on");
    expect(waiting).not.toContain("switched off by the owner");
    expect(overview.html).toContain(`href="/dashboard/intakes/${fresh.id}"`);
    expect(overview.html).toContain(`href="/dashboard/actions/${offAction.id}"`);
  });

  it("lists the endpoints whose deliveries failed in the last 24 hours, with the last attempt's status or error", () => {
    const failing = testIdText(overview.html, "failing");
    expect(failing).toContain(`${urls.retrying} : 1 delivery failed or retrying in the last 24 hours`);
    expect(failing).toContain("HTTP 500");
    expect(failing).toContain(urls.failedRecently);
    expect(failing).toContain("no answer — the connection failed: refused");
    expect(failing).not.toContain(urls.failedLongAgo);
    expect(failing).not.toContain(urls.healthy);
    expect(failing).not.toContain(urls.theirFailing);
  });

  it("shows the knowledge sources used against the plan's limit", () => {
    expect(testIdText(overview.html, "knowledge-use")).toBe("Knowledge sources 2 of 3 sources used");
  });

  it("lists the active keys and connected apps with when each was last used, never when not yet", async () => {
    const credentials = testIdText(overview.html, "credentials");
    // Stored 07:08 and 05:06 UTC; shown in the business's zone, Europe/Amsterdam: summer time in May, winter in March.
    expect(credentials).toContain(`${app.client.client_name} (app) Last used: 6 May 2026, 09:08`);
    expect(credentials).toContain(`${usedKey.displayPrefix}… (API key) Last used: 4 Mar 2026, 06:06`);
    expect(overview.html).toContain('<time datetime="2026-05-06T07:08');
    // The zone is named once on the page.
    expect(overview.html.match(/Times are in Europe\/Amsterdam time\./g)).toHaveLength(1);
    const unusedPrefix = (await db.select().from(apiKeys).where(eq(apiKeys.id, unusedKey.apiKeyId)).get())
      ?.displayPrefix;
    expect(credentials).toContain(`${unusedPrefix}… (API key) Last used: never`);
    expect(credentials).not.toContain(gone.client.client_name);
    expect(credentials).not.toContain(displayPrefixOf(revokedKey.apiKey));
  });

  it("costs one D1 round trip beyond the session's: one query per list, in one batch", async () => {
    const { d1, trips } = countingD1(shardD1);
    const ctx = createExecutionContext();
    const request = new Request(`${BASE}/dashboard`, { headers: { Cookie: jar.header() } });
    const response = await worker.fetch(request, { ...env, [SHARD_D1_BINDING]: d1 }, ctx);
    await waitOnExecutionContext(ctx);
    await expect(response).toHaveStatus(200);
    expect(trips).toHaveLength(2);
    expect(trips[1]).toBe("batch of 7");
  });

  it("says so when nothing needs the owner", async () => {
    const quiet = await createOwnerBusiness();
    const html = (await page(await signedIn(quiet), "/dashboard")).html;
    expect(testIdText(html, "waiting")).toContain("Nothing is waiting for you.");
    expect(testIdText(html, "failing")).toContain("No delivery has failed in the last 24 hours.");
    expect(testIdText(html, "credentials")).toContain("Last used: never");
  });
});
