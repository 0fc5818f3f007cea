import { exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { actionCalls, events } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { MOVING_RETRY_AFTER_SECONDS } from "../../src/domain/access/business-moving";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { registerAction } from "../helpers/actions";
import { shardDependencies } from "../helpers/dependencies";
import { createBusiness, shardDb } from "../helpers/fixtures";
import { call, expectError, json, RUNTIME } from "../helpers/http";
import { reportChange } from "../helpers/platform";
import { newBooking } from "../helpers/platform-changes";
import { receiverBox } from "../helpers/receiver";
import { expectServerErrors } from "../helpers/server-errors";
import { REGIONS, setMoving, shardsHolding } from "../helpers/shards";

// The runtime API names its business in the path: the directory says which shard holds it, and the call runs there
// (docs/scaling.md, Regional shards). While the business moves to another shard, its writes are refused with 503 and
// Retry-After, and its reads go on (docs/scaling.md, Moving a business between shards).

const NO_BUSINESS = "No business has that id.";
const MOVING = `The business is being moved to another database, and its data cannot change until the move ends: retry in ${MOVING_RETRY_AFTER_SECONDS} seconds.`;

const context = (businessId: string) =>
  call(`/internal/v1/businesses/${businessId}/context?channel=whatsapp`, { headers: RUNTIME });

const callAction = (businessId: string, name: string) =>
  call(`/internal/v1/businesses/${businessId}/actions/${name}/call`, {
    method: "POST",
    headers: RUNTIME,
    body: { conversation_id: "conv-shards", message_id: crypto.randomUUID(), channel: "whatsapp", arguments: {} },
  });

const setPlan = (businessId: string) =>
  call(`/internal/v1/businesses/${businessId}/plan`, {
    method: "PUT",
    headers: RUNTIME,
    body: { plan: "business", active: true },
  });

/** The events of a business of eu1, the shard of the moving business. */
const eventsOf = (businessId: string) =>
  shardDb("eu1").select({ id: events.id }).from(events).where(eq(events.businessId, businessId));

/** A business in `shard` with an action switched on, answered by the test receiver. */
async function businessWithAction(shard: ShardName) {
  const { business, apiKey } = await createBusiness({ shard, name: `Shop in ${shard}` });
  const action = await registerAction(apiKey, `stock_${shard}`, { url: receiverBox(`action-${shard}`).url("/ok") });
  await switchAction(shardDependencies(shard), business.id, action.id, true);
  return { business, action };
}

describe.each(REGIONS)("the runtime API for a business in %s", async (shard) => {
  const { business, action } = await businessWithAction(shard);

  it("answers the context from the business's shard, with its action", async () => {
    const response = await context(business.id);
    await expect(response).toHaveStatus(200);
    const body = await json<{ business: { id: string; name: string }; actions: Array<{ name: string }> }>(response);
    expect(body.business).toMatchObject({ id: business.id, name: `Shop in ${shard}` });
    expect(body.actions.map((listed) => listed.name)).toEqual([action.name]);
  });

  it("calls the action and records the call in the business's shard only", async () => {
    const response = await callAction(business.id, action.name);
    await expect(response).toHaveStatus(200);
    const { call: made } = await json<{ call: { id: number; status: string } }>(response);
    expect(made.status).toBe("success");
    expect(await shardsHolding(actionCalls, eq(actionCalls.businessId, business.id))).toEqual([shard]);
  });

  it("reaches the business's shard through the RPC entrypoint too", async () => {
    expect(await exports.RuntimeApi.context(business.id, "whatsapp")).toMatchObject({
      ok: true,
      value: { business: { id: business.id }, actions: [{ name: action.name }] },
    });
    const called = await exports.RuntimeApi.callAction(business.id, action.name, {
      conversation_id: "conv-shards",
      message_id: crypto.randomUUID(),
      channel: "whatsapp",
    });
    expect(called).toMatchObject({ ok: true, value: { call: { status: "success" } } });
  });
});

describe("a business the directory does not know", () => {
  it("is the same 404 as before sharding, over HTTP and RPC", async () => {
    const unknown = crypto.randomUUID();
    await expectError(await context(unknown), 404, NO_BUSINESS);
    await expectError(await reportChange(unknown, { booking: newBooking() }), 404, NO_BUSINESS);
    expect(await exports.RuntimeApi.context(unknown, "whatsapp")).toEqual({
      ok: false,
      status: 404,
      code: "not_found",
      error: NO_BUSINESS,
    });
  });
});

describe("a business being moved to another shard", async () => {
  const { business, action } = await businessWithAction("eu1");

  it("refuses every write with 503 and Retry-After: a report, an action call, a plan change", async () => {
    await setMoving(business.id, true);
    expectServerErrors();
    const eventsBefore = await eventsOf(business.id);
    for (const refused of [
      await reportChange(business.id, { booking: newBooking() }),
      await callAction(business.id, action.name),
      await setPlan(business.id),
    ]) {
      expect(refused.headers.get("Retry-After")).toBe(String(MOVING_RETRY_AFTER_SECONDS));
      await expectError(refused, 503, MOVING);
    }
    expect(await eventsOf(business.id)).toEqual(eventsBefore);
    expect(await shardsHolding(actionCalls, eq(actionCalls.businessId, business.id))).toEqual([]);
  });

  it("refuses the same writes through the RPC entrypoint, as values", async () => {
    await setMoving(business.id, true);
    const refusal = { ok: false, status: 503, code: "temporarily_unavailable", error: MOVING };
    expect(await exports.RuntimeApi.reportChange(business.id, { booking: newBooking() })).toEqual(refusal);
    expect(await exports.RuntimeApi.setPlan(business.id, { plan: "business", active: true })).toEqual(refusal);
  });

  it("still answers its reads: the context", async () => {
    await setMoving(business.id, true);
    await expect(await context(business.id)).toHaveStatus(200);
    expect(await exports.RuntimeApi.context(business.id, "whatsapp")).toMatchObject({ ok: true });
  });

  it("takes its writes again once the move has ended", async () => {
    await setMoving(business.id, false);
    await expect(await reportChange(business.id, { booking: newBooking() })).toHaveStatus(201);
  });
});
