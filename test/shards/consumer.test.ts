import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { LEGACY_SHARD, type ShardName } from "../../src/db/shards";
import { LEASE_MS } from "../../src/domain/webhooks/delivery-claim";
import { RETRY_AFTER_FAILED_CLAIM_SECONDS } from "../../src/queues/deliver-webhooks";
import type { DeliveryMessage } from "../../src/queues/delivery-message";
import { countingD1 } from "../helpers/counting-d1";
import { createBusiness } from "../helpers/fixtures";
import { receiverBox } from "../helpers/receiver";
import { expectServerErrors, takeServerErrors } from "../helpers/server-errors";
import { failingBatches, setMoving } from "../helpers/shards";
import { attemptsIn, consumeBatch, deliveryRowIn, outboxOnly, subscribe } from "../helpers/webhooks";

// A queue batch mixes the shards' messages; each message names its shard, and the consumer claims and records each
// shard's group in that shard's database, apart from the others (docs/scaling.md, The queue, the consumer and the
// cron).

// The consumer's clock: in the future, so that no sweep (on the real clock) takes these deliveries for lost ones.
const T0 = Date.parse("2030-02-04T10:00:00.000Z");

/** A business in `shard` with two endpoints, and one event to both: the messages of its two deliveries. */
async function twoDeliveriesIn(shard: ShardName) {
  const { business, apiKey } = await createBusiness({ shard });
  const boxes = [receiverBox(`consumer-${shard}-a`), receiverBox(`consumer-${shard}-b`)];
  for (const box of boxes) await subscribe(apiKey, box.url("/ok"));
  const { deliveryIds } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 1 } } }], shard);
  // A legacy message is one sent before sharding: it names no shard.
  const messages = deliveryIds.map(
    (deliveryId): DeliveryMessage => (shard === LEGACY_SHARD ? { deliveryId } : { deliveryId, shard }),
  );
  const sent = async () => (await Promise.all(boxes.map((box) => box.recorded()))).flat().length;
  return { business, shard, deliveryIds, messages, sent };
}

/** The messages of both groups taken in turns, as one queue batch would hold them. */
const interleaved = (a: DeliveryMessage[], b: DeliveryMessage[]) =>
  a.flatMap((message, i) => [message, ...b.slice(i, i + 1)]);

async function expectDeliveredIn(group: Awaited<ReturnType<typeof twoDeliveriesIn>>) {
  expect(await group.sent()).toBe(2);
  for (const id of group.deliveryIds) {
    expect(await deliveryRowIn(group.shard, id)).toMatchObject({ status: "delivered", attemptCount: 1 });
    expect(await attemptsIn(group.shard, id)).toHaveLength(1);
  }
}

describe("the consumer, a batch of several shards", () => {
  it("claims and records each shard's messages in its shard, in two D1 round trips per shard", async () => {
    const eu = await twoDeliveriesIn("eu1");
    const us = await twoDeliveriesIn("us1");
    const legacy = await twoDeliveriesIn(LEGACY_SHARD);
    const counted = { eu1: countingD1(env.SHARD_EU1), us1: countingD1(env.SHARD_US1), legacy: countingD1(env.DB) };
    const bindings = { SHARD_EU1: counted.eu1.d1, SHARD_US1: counted.us1.d1, DB: counted.legacy.d1 };

    const batch = [...interleaved(eu.messages, us.messages), ...legacy.messages];
    const outcomes = await consumeBatch(batch, T0, { bindings });

    expect(outcomes).toEqual(batch.map(() => ({ acked: true, retryDelay: undefined })));
    for (const group of [eu, us, legacy]) await expectDeliveredIn(group);
    // Each shard: one batch claims its group, one records it.
    for (const { trips } of Object.values(counted)) {
      expect(trips).toEqual(["batch of 4", expect.stringMatching(/^batch of \d+$/)]);
    }
  });

  it("leaves a shard's messages to a retry when its database fails to claim, and delivers the other shard's", async () => {
    const eu = await twoDeliveriesIn("eu1");
    const us = await twoDeliveriesIn("us1");
    const batch = interleaved(eu.messages, us.messages);
    expectServerErrors();

    const outcomes = await consumeBatch(batch, T0, { bindings: { SHARD_EU1: failingBatches(env.SHARD_EU1) } });

    // Nothing of the failed group was claimed: its messages are retried after the failed claim's pause.
    expect(outcomes).toEqual(
      batch.map((message) =>
        message.shard === "eu1"
          ? { acked: false, retryDelay: RETRY_AFTER_FAILED_CLAIM_SECONDS }
          : { acked: true, retryDelay: undefined },
      ),
    );
    expect(takeServerErrors().seen).toEqual([
      expect.stringMatching(/"shard":"eu1","step":"claim deliveries","deliveries":2,.*injected fault/),
    ]);
    await expectDeliveredIn(us);
    expect(await eu.sent()).toBe(0);
    for (const id of eu.deliveryIds) {
      expect(await deliveryRowIn("eu1", id)).toMatchObject({ status: "pending", attemptCount: 0, leaseUntil: null });
    }
  });

  it("leaves a shard's messages to a retry after the lease when its database fails to record, and records the other shard's", async () => {
    const eu = await twoDeliveriesIn("eu1");
    const us = await twoDeliveriesIn("us1");
    const batch = interleaved(us.messages, eu.messages);
    expectServerErrors();

    // us1's first batch (the claim) succeeds, its second (the record) fails.
    const outcomes = await consumeBatch(batch, T0, { bindings: { SHARD_US1: failingBatches(env.SHARD_US1, 1) } });

    expect(outcomes).toEqual(
      batch.map((message) =>
        message.shard === "us1"
          ? { acked: false, retryDelay: LEASE_MS / 1000 }
          : { acked: true, retryDelay: undefined },
      ),
    );
    expect(takeServerErrors().seen).toEqual([
      expect.stringMatching(/"shard":"us1","step":"record delivery attempts","deliveries":2,.*injected fault/),
    ]);
    await expectDeliveredIn(eu);
    // Sent, not recorded: pending under the lease, sent again once it has run out.
    expect(await us.sent()).toBe(2);
    for (const id of us.deliveryIds) {
      expect(await deliveryRowIn("us1", id)).toMatchObject({
        status: "pending",
        attemptCount: 0,
        leaseUntil: new Date(T0 + LEASE_MS).toISOString(),
      });
      expect(await attemptsIn("us1", id)).toHaveLength(0);
    }
  });
});

describe("a delivery of a business being moved", () => {
  it("waits: its message comes back after the move's retry time, nothing is attempted, and it goes once the move ends", async () => {
    const { business, deliveryIds, messages, sent } = await twoDeliveriesIn("us1");
    await setMoving(business.id, true);
    expect(await consumeBatch(messages, T0)).toEqual([
      { acked: false, retryDelay: 30 },
      { acked: false, retryDelay: 30 },
    ]);
    expect(await sent()).toBe(0);
    for (const id of deliveryIds) expect(await attemptsIn("us1", id)).toEqual([]);
    await setMoving(business.id, false);
    expect(await consumeBatch(messages, T0)).toEqual([
      { acked: true, retryDelay: undefined },
      { acked: true, retryDelay: undefined },
    ]);
    expect(await sent()).toBe(2);
  });
});
