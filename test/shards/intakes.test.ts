import { env, runInDurableObject } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { intakeResponses } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import type { IntakeRun } from "../../src/domain/intakes/conversation";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import type { IntakeConversation } from "../../src/durable-objects/intake-conversation";
import { conversationObject } from "../../src/durable-objects/jurisdictions";
import { moved } from "../helpers/business-move";
import { shardDependencies } from "../helpers/dependencies";
import { createBusiness } from "../helpers/fixtures";
import { expectError, json } from "../helpers/http";
import { createIntake, runtimeIntake } from "../helpers/intakes";
import { receiverBox } from "../helpers/receiver";
import { expectServerErrors } from "../helpers/server-errors";
import { REGIONS, setMoving, shardsHolding } from "../helpers/shards";
import { subscribe } from "../helpers/webhooks";

// An intake conversation writes in the shard its business is in when it writes, its row checked there at each call of
// the runtime, never in one the business has left; its object is in the jurisdiction of that shard (docs/scaling.md,
// Moving a business between shards, and Where an EU business's data lives).

type State = { status: string; response_id: number | null };

const ANSWERS = { full_name: "Mo Ali", email: "mo@example.com" };

/** A business in `shard` with an intake switched on, an endpoint subscribed to intake.completed, and a run started. */
async function businessWithIntake(shard: ShardName) {
  const { business, apiKey } = await createBusiness({ shard });
  const box = receiverBox(`intake-${shard}`);
  await subscribe(apiKey, box.url("/ok"), ["intake.completed"]);
  const intake = await createIntake(apiKey);
  await switchIntakeOn(shardDependencies(shard), business.id, intake.id);
  const runtime = runtimeIntake(business);
  const cid = `conv-${shard}-${crypto.randomUUID()}`;
  const started = await runtime.start(cid, { intake_id: intake.id, channel: "whatsapp" });
  await expect(started).toHaveStatus(201);
  return { business, intake, box, cid, runtime };
}

const responseOf = (businessId: string, cid: string) =>
  and(eq(intakeResponses.businessId, businessId), eq(intakeResponses.conversationId, cid));

/** The run the conversation's object holds, in the jurisdiction of `shard`. */
const runIn = (shard: ShardName, businessId: string, cid: string) =>
  runInDurableObject<IntakeConversation, IntakeRun | undefined>(
    conversationObject(env, { conversationId: cid, businessId, shard }),
    (_instance, state) => state.storage.get<IntakeRun>("run"),
  );

describe.each(REGIONS)("an intake in a conversation of a business in %s", (shard) => {
  it("stores its response in the business's shard only, and delivers intake.completed from there", async () => {
    const { business, box, cid, runtime } = await businessWithIntake(shard);

    const done = await json<State>(await runtime.answer(cid, ANSWERS));

    expect(done).toMatchObject({ status: "completed", response_id: expect.any(Number) });
    expect(await shardsHolding(intakeResponses, responseOf(business.id, cid))).toEqual([shard]);
    const [request] = await box.arrived(1);
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({
      event: "intake.completed",
      business: { id: business.id },
      data: { response_id: done.response_id, conversation: { id: cid } },
    });
  });

  it("is not reached through another business's path", async () => {
    const { cid } = await businessWithIntake(shard);
    const { business: other } = await createBusiness({ shard });
    await expectError(
      await runtimeIntake(other).answer(cid, ANSWERS),
      409,
      "No intake is running in this conversation.",
    );
  });
});

describe("an intake while its business moves", () => {
  it("refuses a start and answers with 503 and Retry-After, and stores nothing, until the move ends", async () => {
    const { business, intake, cid, runtime } = await businessWithIntake("us1");
    expectServerErrors();
    await setMoving(business.id, true);
    const refusals = [
      await runtime.start(`conv-${crypto.randomUUID()}`, { intake_id: intake.id, channel: "sms" }),
      await runtime.answer(cid, ANSWERS),
      await runtime.decline(cid),
    ];
    for (const refused of refusals) {
      await expect(refused).toHaveStatus(503);
      expect(refused.headers.get("Retry-After")).toBe("30");
    }
    expect((await json<State>(await runtime.state(cid))).status).toBe("started");
    expect(await shardsHolding(intakeResponses, responseOf(business.id, cid))).toEqual([]);
    await setMoving(business.id, false);
    expect((await json<State>(await runtime.answer(cid, ANSWERS))).status).toBe("completed");
  });

  it("completes a run started before a move into the EU in the new shard, its object handed over", async () => {
    const { business, box, cid, runtime } = await businessWithIntake("us1");
    expect((await runIn("us1", business.id, cid))?.status).toBe("started");

    await moved(business.id, "eu1");
    const done = await json<State>(await runtime.answer(cid, ANSWERS));

    expect(done).toMatchObject({ status: "completed", response_id: expect.any(Number) });
    expect(await shardsHolding(intakeResponses, responseOf(business.id, cid))).toEqual(["eu1"]);
    // The customer's answers are kept in the EU object now, none in the one outside it.
    expect(await runIn("us1", business.id, cid)).toBeUndefined();
    expect((await runIn("eu1", business.id, cid))?.status).toBe("completed");
    const [request] = await box.arrived(1);
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({
      event: "intake.completed",
      data: { response_id: done.response_id, conversation: { id: cid } },
    });
  });
});
