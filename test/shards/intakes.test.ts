import { env, runInDurableObject } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { intakeResponses } from "../../src/db/schema";
import { LEGACY_SHARD, type ShardName } from "../../src/db/shards";
import type { IntakeRun } from "../../src/domain/intakes/conversation";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import type { IntakeConversation } from "../../src/durable-objects/intake-conversation";
import { shardDependencies } from "../helpers/dependencies";
import { createBusiness } from "../helpers/fixtures";
import { call, json, RUNTIME } from "../helpers/http";
import { createIntake } from "../helpers/intakes";
import { receiverBox } from "../helpers/receiver";
import { REGIONS, shardsHolding } from "../helpers/shards";
import { subscribe } from "../helpers/webhooks";

// An intake conversation knows its business when it starts: the run looks up the business's shard then, keeps it,
// and completes there (docs/scaling.md, The queue, the consumer and the cron: intake conversations). A run stored
// before sharding names no shard: its business is in the legacy one.

type State = { status: string; response_id: number | null };

const start = (cid: string, body: Record<string, unknown>) =>
  call(`/internal/v1/conversations/${cid}/intake`, { method: "POST", headers: RUNTIME, body });
const answerAll = (cid: string) =>
  call(`/internal/v1/conversations/${cid}/intake/answers`, {
    method: "POST",
    headers: RUNTIME,
    body: { answers: { full_name: "Mo Ali", email: "mo@example.com" } },
  });

/** A business in `shard` with an intake switched on, and an endpoint subscribed to intake.completed. */
async function businessWithIntake(shard: ShardName) {
  const { business, apiKey } = await createBusiness({ shard });
  const box = receiverBox(`intake-${shard}`);
  await subscribe(apiKey, box.url("/ok"), ["intake.completed"]);
  const intake = await createIntake(apiKey);
  await switchIntakeOn(shardDependencies(shard), business.id, intake.id);
  const cid = `conv-${shard}-${crypto.randomUUID()}`;
  const started = await start(cid, { business_id: business.id, intake_id: intake.id, channel: "whatsapp" });
  expect(started.status).toBe(201);
  return { business, box, cid };
}

const responseOf = (businessId: string, cid: string) =>
  and(eq(intakeResponses.businessId, businessId), eq(intakeResponses.conversationId, cid));

describe.each(REGIONS)("an intake in a conversation of a business in %s", (shard) => {
  it("stores its response in the business's shard only, and delivers intake.completed from there", async () => {
    const { business, box, cid } = await businessWithIntake(shard);

    const done = await json<State>(await answerAll(cid));

    expect(done).toMatchObject({ status: "completed", response_id: expect.any(Number) });
    expect(await shardsHolding(intakeResponses, responseOf(business.id, cid))).toEqual([shard]);
    const [request] = await box.arrived(1);
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({
      event: "intake.completed",
      business: { id: business.id },
      data: { response_id: done.response_id, conversation: { id: cid } },
    });
  });
});

describe("an intake run stored before sharding, which names no shard", () => {
  it("completes in the legacy shard", async () => {
    const { business, cid } = await businessWithIntake(LEGACY_SHARD);
    const stub = env.INTAKE_CONVERSATIONS.get(env.INTAKE_CONVERSATIONS.idFromName(cid));
    await runInDurableObject<IntakeConversation, void>(stub, async (_instance, state) => {
      const { shard: _, ...stored } = (await state.storage.get<IntakeRun>("run")) as IntakeRun;
      await state.storage.put("run", stored);
    });

    expect(await json<State>(await answerAll(cid))).toMatchObject({ status: "completed" });
    expect(await shardsHolding(intakeResponses, responseOf(business.id, cid))).toEqual([LEGACY_SHARD]);
  });
});
