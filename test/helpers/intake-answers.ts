import { and, eq } from "drizzle-orm";
import { expect } from "vitest";
import { events, webhookDeliveries, webhookEndpoints } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { testDependencies } from "./dependencies";
import { createApiKey, createBusiness, shardDb } from "./fixtures";
import { json } from "./http";
import { createIntake, runtimeIntake } from "./intakes";
import { receiverBox } from "./receiver";
import { subscribe } from "./webhooks";

/* Two keys of one business and the first key's intake answers, for the tests that keep those answers its own. */

export const ANOTHER_KEYS =
  "This endpoint receives intake.completed for another API key's intakes (or has some still pending): only that key, or the business's owner, can change, re-point or delete it, or subscribe it to intake.completed.";

export type Page = { data: Array<{ id: number; event: string }> };

/** A business in `shard` with two keys; key 1 owns an intake, switched on, and an endpoint for its answers. */
export async function twoKeys(shard: ShardName) {
  const { business, apiKey: key1 } = await createBusiness({ shard });
  const { apiKey: key2, apiKeyId: key2Id } = await createApiKey(business.id, { shard });
  const box = receiverBox("answers");
  const answers = await subscribe(key1, box.url("/answers"), ["intake.completed"]);
  const intake = await createIntake(key1);
  const deps = testDependencies(shard);
  await switchIntakeOn(deps, business.id, intake.id);
  const db = shardDb(shard);

  /** A customer completes key 1's intake through the runtime API; answers the intake.completed delivery's row. */
  const completed = async () => {
    const runtime = runtimeIntake(business);
    const cid = `conv-${crypto.randomUUID()}`;
    const started = await runtime.start(cid, { intake_id: intake.id, channel: "whatsapp", customer: {} });
    await expect(started).toHaveStatus(201);
    const done = await json<{ status: string }>(
      await runtime.answer(cid, { full_name: "Noor Haddad", email: "noor@example.com" }),
    );
    expect(done.status).toBe("completed");
    await box.arrived(1);
    const [delivery] = await db
      .select({ id: webhookDeliveries.id, eventId: webhookDeliveries.eventId })
      .from(webhookDeliveries)
      .innerJoin(events, eq(events.id, webhookDeliveries.eventId))
      .where(and(eq(webhookDeliveries.endpointId, answers.id), eq(events.type, "intake.completed")));
    if (!delivery) throw new Error("no intake.completed delivery");
    return delivery;
  };
  const endpointRow = async (id = answers.id) =>
    db.select().from(webhookEndpoints).where(eq(webhookEndpoints.id, id)).get();
  return { business, key1, key2, key2Id, box, answers, intake, deps, db, completed, endpointRow };
}
