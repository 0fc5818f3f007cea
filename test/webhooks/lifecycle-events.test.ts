import { and, eq, inArray } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { actions, events, intakes, webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import { registerAction } from "../helpers/actions";
import { approveIntake, page, signedIn, submit, switchActionOn } from "../helpers/dashboard";
import { createApiKey, db, shardD1 } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { createIntake, type Intake, patchIntake } from "../helpers/intakes";
import { type CookieJar, connectApp, createOwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import { expectServerErrors } from "../helpers/server-errors";
import { subscribe } from "../helpers/webhooks";

// docs/webhooks.md, Lifecycle events; docs/architecture.md, Lifecycle events. action.enabled and action.disabled {
// action, reason }, intake.enabled and intake.disabled { intake, reason }, where reason is "owner", "changed" (a PATCH
// switched it off), or "credential_revoked" ... delivered only to endpoints of the owner side concerned. Through the
// dashboard and the API, the real queue and consumer, and the real receiver.

type Envelope = { id: string; event: string; business: { id: string }; data: Record<string, unknown> };
type Box = ReturnType<typeof receiverBox>;

/** The envelopes `box` received, in order. */
const envelopesAt = async (box: Box) => (await box.recorded()).map((request) => JSON.parse(request.body) as Envelope);

/**
 * Waits for the envelope of `event` about the record `id` at `box`; checks that its event was delivered to `endpoint`
 * and to no other endpoint at all (every delivery row of the event), then answers it.
 */
async function deliveredOnlyTo(box: Box, endpoint: { id: number }, event: string, id: number) {
  const about = (envelope: Envelope) =>
    envelope.event === event && (envelope.data.action ?? envelope.data.intake) !== undefined
      ? ((envelope.data.action ?? envelope.data.intake) as { id: number }).id === id
      : false;
  const envelope = await vi.waitFor(
    async () => {
      const found = (await envelopesAt(box)).filter(about);
      expect(found).toHaveLength(1);
      return found[0] as Envelope;
    },
    { timeout: 10_000, interval: 50 },
  );
  const receivers = await db
    .select({ endpointId: webhookDeliveries.endpointId })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.eventId, envelope.id));
  expect(receivers).toEqual([{ endpointId: endpoint.id }]);
  return envelope;
}

/** The lifecycle events stored for the business about the record `id` (action or intake), oldest first. */
async function lifecycleEventsOf(businessId: string, kind: "action" | "intake", id: number) {
  const rows = await db
    .select()
    .from(events)
    .where(and(eq(events.businessId, businessId), inArray(events.type, [`${kind}.enabled`, `${kind}.disabled`])))
    .orderBy(events.createdAt);
  return rows
    .map((row) => JSON.parse(row.envelope) as Envelope)
    .filter((envelope) => (envelope.data[kind] as { id: number }).id === id);
}

/** The action as `GET /actions` lists it to `credential`. */
async function listedAction(credential: string, id: number) {
  const response = await call("/api/v1/actions", { key: credential });
  return (await json<{ data: Array<{ id: number }> }>(response)).data.find((action) => action.id === id);
}

const switchActionOff = (jar: CookieJar, id: number) =>
  submit(jar, `/dashboard/actions/${id}`, `/dashboard/actions/${id}/off`);

const switchIntakeOff = (jar: CookieJar, id: number) =>
  submit(jar, `/dashboard/intakes/${id}`, `/dashboard/intakes/${id}/off`);

/** A business with its keys' endpoint and two connected apps, each with an endpoint of its own, all on `*`. */
async function businessWithThreeSides(name: string) {
  const shop = await createOwnerBusiness();
  const jar = await signedIn(shop);
  const appA = await connectApp(shop);
  const appB = await connectApp(shop);
  const boxes = { keys: receiverBox(`${name}-keys`), appA: receiverBox(`${name}-a`), appB: receiverBox(`${name}-b`) };
  const endpoints = {
    keys: await subscribe(shop.apiKey, boxes.keys.url("/hooks")),
    appA: await subscribe(appA.tokens.access_token, boxes.appA.url("/hooks")),
    appB: await subscribe(appB.tokens.access_token, boxes.appB.url("/hooks")),
  };
  return { shop, jar, appA: appA.tokens.access_token, boxes, endpoints };
}

describe("action.enabled and action.disabled", async () => {
  const { shop, jar, appA, boxes, endpoints } = await businessWithThreeSides("action");
  // Another business's endpoint: never a receiver of this business's lifecycle events.
  const stranger = await createOwnerBusiness();
  const strangerBox = receiverBox("action-stranger");
  await subscribe(stranger.apiKey, strangerBox.url("/hooks"));

  it("the owner switching an app's action on sends action.enabled (owner) to that app's endpoints and nowhere else", async () => {
    const action = await registerAction(appA, "stock_a");
    await expect(await switchActionOn(jar, action.id)).toHaveStatus(303);

    const envelope = await deliveredOnlyTo(boxes.appA, endpoints.appA, "action.enabled", action.id);
    expect(envelope.business.id).toBe(shop.business.id);
    expect(envelope.data).toEqual({ action: await listedAction(appA, action.id), reason: "owner" });
    expect(envelope.data.action).toMatchObject({ enabled: true, source: "oauth_app" });
    // The keys' endpoint of the same business, the other app's, and another business's received nothing.
    for (const box of [boxes.keys, boxes.appB, strangerBox]) expect(await box.recorded()).toEqual([]);
  });

  it("the owner switching it off sends action.disabled (owner) to the same endpoints only", async () => {
    const action = await registerAction(appA, "stock_a_off");
    await expect(await switchActionOn(jar, action.id)).toHaveStatus(303);
    await deliveredOnlyTo(boxes.appA, endpoints.appA, "action.enabled", action.id);
    await expect(await switchActionOff(jar, action.id)).toHaveStatus(303);

    const envelope = await deliveredOnlyTo(boxes.appA, endpoints.appA, "action.disabled", action.id);
    expect(envelope.data).toEqual({ action: await listedAction(appA, action.id), reason: "owner" });
    expect(envelope.data.action).toMatchObject({ enabled: false });
    for (const box of [boxes.keys, boxes.appB]) expect(await box.recorded()).toEqual([]);
  });

  it("the keys' action goes to the keys' endpoint, not to any app's", async () => {
    const action = await registerAction(shop.apiKey, "stock_keys");
    await expect(await switchActionOn(jar, action.id)).toHaveStatus(303);
    const envelope = await deliveredOnlyTo(boxes.keys, endpoints.keys, "action.enabled", action.id);
    expect(envelope.data).toEqual({ action: await listedAction(shop.apiKey, action.id), reason: "owner" });
    expect(envelope.data.action).toMatchObject({ source: "api_key" });
    expect(await lifecycleEventsOf(shop.business.id, "action", action.id)).toHaveLength(1);
  });

  it("a partner's PATCH with a new url sends action.disabled (changed); one that keeps the url sends nothing", async () => {
    const action = await registerAction(appA, "stock_moved");
    await expect(await switchActionOn(jar, action.id)).toHaveStatus(303);
    await deliveredOnlyTo(boxes.appA, endpoints.appA, "action.enabled", action.id);

    const retitled = await call(`/api/v1/actions/${action.id}`, {
      key: appA,
      method: "PATCH",
      body: { title: "Stock, renamed" },
    });
    expect(await json(retitled)).toMatchObject({ enabled: true, title: "Stock, renamed" });
    const moved = await call(`/api/v1/actions/${action.id}`, {
      key: appA,
      method: "PATCH",
      body: { url: "https://partner.example/stock/v2" },
    });
    await expect(moved).toHaveStatus(200);
    const answered = await json(moved);

    const envelope = await deliveredOnlyTo(boxes.appA, endpoints.appA, "action.disabled", action.id);
    expect(envelope.data).toEqual({ action: answered, reason: "changed" });
    expect(answered).toMatchObject({
      enabled: false,
      url: "https://partner.example/stock/v2",
      title: "Stock, renamed",
    });
    expect((await lifecycleEventsOf(shop.business.id, "action", action.id)).map((e) => e.event)).toEqual([
      "action.enabled",
      "action.disabled",
    ]);
  });

  it("sends nothing when nothing is switched: a new url on an action that is off, the same switch-on twice", async () => {
    const action = await registerAction(appA, "stock_quiet");
    const moved = await call(`/api/v1/actions/${action.id}`, {
      key: appA,
      method: "PATCH",
      body: { url: "https://partner.example/stock/v3" },
    });
    await expect(moved).toHaveStatus(200);
    expect(await lifecycleEventsOf(shop.business.id, "action", action.id)).toEqual([]);
    // The owner's form sent twice (a double click): the second finds the action on.
    const path = `/dashboard/actions/${action.id}`;
    const reviewed = /name="reviewed" value="([0-9a-f]{64})"/.exec((await page(jar, path)).html)?.[1] ?? "";
    for (let i = 0; i < 2; i++) await expect(await submit(jar, path, `${path}/on`, { reviewed })).toHaveStatus(303);
    expect((await lifecycleEventsOf(shop.business.id, "action", action.id)).map((e) => e.event)).toEqual([
      "action.enabled",
    ]);
  });
});

describe("intake.enabled and intake.disabled", async () => {
  const { shop, jar, appA, boxes, endpoints } = await businessWithThreeSides("intake");

  it("the owner's approval sends intake.enabled (owner) to the app that registered it, and nowhere else", async () => {
    const intake = await createIntake(appA);
    await expect(await approveIntake(jar, intake.id)).toHaveStatus(303);

    const envelope = await deliveredOnlyTo(boxes.appA, endpoints.appA, "intake.enabled", intake.id);
    const shown = await json<Intake>(await call(`/api/v1/intakes/${intake.id}`, { key: appA }));
    expect(envelope.data).toEqual({ intake: shown, reason: "owner" });
    expect(shown.enabled).toBe(true);
    for (const box of [boxes.keys, boxes.appB]) expect(await box.recorded()).toEqual([]);
  });

  it("a PATCH that changes an intake that is on sends intake.disabled (changed); the same values send nothing", async () => {
    const intake = await createIntake(appA);
    await expect(await approveIntake(jar, intake.id)).toHaveStatus(303);
    await deliveredOnlyTo(boxes.appA, endpoints.appA, "intake.enabled", intake.id);

    const unchanged = await patchIntake(appA, intake.id, { title: intake.title, enabled: true });
    expect(await json(unchanged)).toMatchObject({ enabled: true });
    const changed = await patchIntake(appA, intake.id, { title: "Quote request, kitchens" });
    await expect(changed).toHaveStatus(200);
    const answered = await json<Intake>(changed);

    const envelope = await deliveredOnlyTo(boxes.appA, endpoints.appA, "intake.disabled", intake.id);
    expect(envelope.data).toEqual({ intake: answered, reason: "changed" });
    expect(answered).toMatchObject({ enabled: false, title: "Quote request, kitchens" });
    expect((await lifecycleEventsOf(shop.business.id, "intake", intake.id)).map((e) => e.event)).toEqual([
      "intake.enabled",
      "intake.disabled",
    ]);
    // A change of an intake that is off switches nothing: nothing is sent.
    await expect(await patchIntake(appA, intake.id, { title: "Quote request, bathrooms" })).toHaveStatus(200);
    expect(await lifecycleEventsOf(shop.business.id, "intake", intake.id)).toHaveLength(2);
  });

  it("the owner switching it off sends intake.disabled (owner); switching an intake that is off sends nothing", async () => {
    const intake = await createIntake(shop.apiKey);
    await expect(await approveIntake(jar, intake.id)).toHaveStatus(303);
    await deliveredOnlyTo(boxes.keys, endpoints.keys, "intake.enabled", intake.id);
    await expect(await switchIntakeOff(jar, intake.id)).toHaveStatus(303);

    const envelope = await deliveredOnlyTo(boxes.keys, endpoints.keys, "intake.disabled", intake.id);
    const shown = await json<Intake>(await call(`/api/v1/intakes/${intake.id}`, { key: shop.apiKey }));
    expect(envelope.data).toEqual({ intake: shown, reason: "owner" });
    await expect(await switchIntakeOff(jar, intake.id)).toHaveStatus(303);
    expect(await lifecycleEventsOf(shop.business.id, "intake", intake.id)).toHaveLength(2);
    // The apps' endpoints heard nothing of the keys' intake.
    for (const box of [boxes.appA, boxes.appB]) {
      const about = (await envelopesAt(box)).filter(
        (e) => (e.data.intake as { id: number } | undefined)?.id === intake.id,
      );
      expect(about).toEqual([]);
    }
  });
});

describe("credential_revoked: the owner revokes the key that registered an intake", () => {
  it("tells the endpoints that key created, which keep receiving through the business's other key", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedIn(shop);
    const rotated = await createApiKey(shop.business.id);
    const ownBox = receiverBox("revoked-own");
    const otherBox = receiverBox("revoked-other");
    const own = await subscribe(rotated.apiKey, ownBox.url("/hooks"));
    await subscribe(shop.apiKey, otherBox.url("/hooks"));
    const intake = await createIntake(rotated.apiKey);
    await expect(await approveIntake(jar, intake.id)).toHaveStatus(303);
    await deliveredOnlyTo(ownBox, own, "intake.enabled", intake.id);

    const path = `/dashboard/keys/${rotated.apiKeyId}/revoke`;
    await expect(await submit(jar, "/dashboard/keys", path)).toHaveStatus(303);

    // An intake belongs to the key that made it (docs/intakes.md, Ownership): its events go to that key's endpoints only.
    const envelope = await deliveredOnlyTo(ownBox, own, "intake.disabled", intake.id);
    expect(envelope.data).toEqual({
      intake: { ...intake, enabled: false, updatedAt: expect.any(String) },
      reason: "credential_revoked",
    });
    const row = await db.select().from(intakes).where(eq(intakes.id, intake.id)).get();
    expect((envelope.data.intake as Intake).updatedAt).toBe(row?.updatedAt);
    expect(await otherBox.recorded()).toEqual([]);
  });

  it("sends and stores nothing when it was the business's last key: that side's endpoints go in the same batch", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedIn(shop);
    const box = receiverBox("revoked-last");
    const endpoint = await subscribe(shop.apiKey, box.url("/hooks"));
    const intake = await createIntake(shop.apiKey);
    await expect(await approveIntake(jar, intake.id)).toHaveStatus(303);
    await deliveredOnlyTo(box, endpoint, "intake.enabled", intake.id);
    const keyId = (await db.query.apiKeys.findFirst({ where: (k, { eq }) => eq(k.businessId, shop.business.id) }))?.id;

    await expect(await submit(jar, "/dashboard/keys", `/dashboard/keys/${keyId}/revoke`)).toHaveStatus(303);
    expect((await db.select().from(intakes).where(eq(intakes.id, intake.id)).get())?.enabled).toBe(false);
    expect(await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, endpoint.id))).toEqual([]);
    expect((await lifecycleEventsOf(shop.business.id, "intake", intake.id)).map((e) => e.event)).toEqual([
      "intake.enabled",
    ]);
  });
});

describe("a switch and its event are written together", async () => {
  const { shop, jar, appA, endpoints } = await businessWithThreeSides("atomic");
  // A real failure of D1 inside the switch's batch: the insert of this business's lifecycle event.
  const injectFault = (event: string) =>
    shardD1.exec(
      `CREATE TRIGGER lifecycle_fault BEFORE INSERT ON events WHEN NEW.business_id = '${shop.business.id}' AND NEW.type = '${event}' BEGIN SELECT RAISE(ABORT, 'injected fault'); END`,
    );
  const removeFault = () => shardD1.exec("DROP TRIGGER lifecycle_fault");
  const deliveriesToAppA = () => db.$count(webhookDeliveries, eq(webhookDeliveries.endpointId, endpoints.appA.id));

  it("the owner's switch: if the event cannot be written, the action stays off; switched again, one event", async () => {
    const action = await registerAction(appA, "stock_atomic");
    expectServerErrors();
    await injectFault("action.enabled");
    const failed = await switchActionOn(jar, action.id);
    await removeFault();
    await expect(failed).toHaveStatus(500);
    expect((await db.select().from(actions).where(eq(actions.id, action.id)).get())?.enabled).toBe(false);
    expect(await lifecycleEventsOf(shop.business.id, "action", action.id)).toEqual([]);
    expect(await deliveriesToAppA()).toBe(0);

    await expect(await switchActionOn(jar, action.id)).toHaveStatus(303);
    expect((await lifecycleEventsOf(shop.business.id, "action", action.id)).map((e) => e.event)).toEqual([
      "action.enabled",
    ]);
    expect(await deliveriesToAppA()).toBe(1);
  });

  it("a partner's PATCH: if the event cannot be written, the intake keeps its content and stays on", async () => {
    const intake = await createIntake(appA);
    await expect(await approveIntake(jar, intake.id)).toHaveStatus(303);
    const before = await db.select().from(intakes).where(eq(intakes.id, intake.id)).get();
    expectServerErrors();
    await injectFault("intake.disabled");
    const failed = await patchIntake(appA, intake.id, { title: "Changed, but not stored" });
    await removeFault();
    await expect(failed).toHaveStatus(500);
    expect(await db.select().from(intakes).where(eq(intakes.id, intake.id)).get()).toEqual(before);
    expect((await lifecycleEventsOf(shop.business.id, "intake", intake.id)).map((e) => e.event)).toEqual([
      "intake.enabled",
    ]);
  });
});
