import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { webhookDeliveries } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { UNENQUEUED_AFTER_MS } from "../../src/domain/webhooks/outbox/sweep";
import { runScheduled } from "../helpers/cron";
import { createBusiness, shardDb } from "../helpers/fixtures";
import { receiverBox } from "../helpers/receiver";
import { failingBatches } from "../helpers/shards";
import { deliveryRowIn, outboxOnly, subscribe } from "../helpers/webhooks";

// The cron runs the outbox sweep and the retention in every shard, each on its own database and apart from the
// others (docs/scaling.md, The queue, the consumer and the cron). The sweep reads the whole database, so this file
// runs in a runtime of its own (vitest.config.ts).

/** A delivery of a business in `shard` whose enqueue was lost: written to the outbox two minutes ago, never sent. */
async function lostDeliveryIn(shard: ShardName) {
  const { business, apiKey } = await createBusiness({ shard });
  const box = receiverBox(`cron-${shard}`);
  await subscribe(apiKey, box.url("/ok"));
  const {
    deliveryIds: [deliveryId = 0],
  } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 1 } } }], shard);
  await shardDb(shard)
    .update(webhookDeliveries)
    .set({ createdAt: new Date(Date.now() - 2 * UNENQUEUED_AFTER_MS).toISOString() })
    .where(eq(webhookDeliveries.id, deliveryId));
  return { shard, deliveryId, box };
}

async function expectDelivered({ shard, deliveryId, box }: Awaited<ReturnType<typeof lostDeliveryIn>>) {
  const [request] = await box.arrived(1);
  expect(request?.headers["x-service-delivery"]).toBe(String(deliveryId));
  await vi.waitFor(async () => expect(await deliveryRowIn(shard, deliveryId)).toMatchObject({ status: "delivered" }), {
    timeout: 10_000,
    interval: 50,
  });
}

describe("the cron's outbox sweep, shard by shard", () => {
  it("re-enqueues a shard's lost deliveries while another shard's sweep fails, and reports that failure once all ran", async () => {
    const eu = await lostDeliveryIn("eu1");
    const us = await lostDeliveryIn("us1");

    await expect(runScheduled({ SHARD_EU1: failingBatches(env.SHARD_EU1) })).rejects.toThrow(/injected fault/);

    await expectDelivered(us);
    expect(await deliveryRowIn("eu1", eu.deliveryId)).toMatchObject({ status: "pending", enqueuedAt: null });
    expect(await eu.box.recorded()).toEqual([]);

    // The next minute's run, the fault gone, sends the first shard's too.
    await runScheduled();
    await expectDelivered(eu);
  });
});
