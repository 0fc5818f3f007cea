import { describe, expect, it, vi } from "vitest";
import { directoryRowOf, move, moved } from "../helpers/business-move";
import { createBusiness } from "../helpers/fixtures";
import { receiverBox } from "../helpers/receiver";
import { attemptsIn, consumeBatch, deliveryRowIn, outboxOnly, subscribe } from "../helpers/webhooks";

// A delivery the consumer claimed before its business's move began, and whose answer comes while the move runs
// (docs/scaling.md, Moving a business between shards): the mark holds back the claims that come after it, not the
// sends already under way, so the copy waits for those. Found by the soak with a move (docs/reliability.md, The
// soak): the attempt was recorded in the shard the business left after the move had copied and verified the
// delivery, the record was deleted with the old rows, and the new shard sent the delivery again.

describe("a delivery being sent as its business's move begins", async () => {
  const { business, apiKey } = await createBusiness({ shard: "eu1" });
  const box = receiverBox("in-flight");
  // The receiver keeps the first request unanswered until the test releases it.
  await subscribe(apiKey, box.url("/hold/1"), ["review.created"]);
  const {
    deliveryIds: [deliveryId = 0],
  } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 1 } } }], "eu1");

  it("is sent once, and its attempt moves with it", async () => {
    const sending = consumeBatch([{ deliveryId, shard: "eu1" }], Date.now());
    await vi.waitFor(async () => expect(await box.recorded()).toHaveLength(1), { interval: 20 });
    // The operator's move runs while the answer is awaited: its steps wait, copying nothing, for the send to end.
    for (let step = 0; step < 3; step++) {
      const waiting = await move(business.id, "us1");
      await expect(waiting).toHaveStatus(202);
      expect(await waiting.json()).toMatchObject({ status: "copying", rows_copied: 0 });
    }
    await box.release();
    await sending;
    // The move ends (run again after an abort); then the consumer takes whatever the new shard still owes.
    if ((await directoryRowOf(business.id))?.shard !== "us1") await moved(business.id, "us1");
    await consumeBatch([{ deliveryId, shard: "us1" }], Date.now());
    expect((await box.recorded()).map((request) => request.headers["x-service-delivery"])).toEqual([
      String(deliveryId),
    ]);
    expect(await deliveryRowIn("us1", deliveryId)).toMatchObject({ status: "delivered", attemptCount: 1 });
    expect(await attemptsIn("us1", deliveryId)).toHaveLength(1);
  });
});

// A delivery written and not yet sent when its business's move began (its message, if any, names the shard left):
// the new shard puts it on the queue as it takes the business, not the sweep a minute later (docs/scaling.md, Moving
// a business between shards).
describe("a delivery waiting in the outbox as its business moves", async () => {
  const { business, apiKey } = await createBusiness({ shard: "us1" });
  const box = receiverBox("moved-in");
  await subscribe(apiKey, box.url("/ok"), ["review.created"]);
  const {
    deliveryIds: [deliveryId = 0],
  } = await outboxOnly(business, [{ event: "review.created", data: { review: { id: 2 } } }], "us1");

  it("is sent from the new shard through the queue once the move ends, with no sweep", async () => {
    await moved(business.id, "eu1");
    const [request] = await box.arrived(1);
    expect(request?.headers["x-service-delivery"]).toBe(String(deliveryId));
    await vi.waitFor(
      async () =>
        expect(await deliveryRowIn("eu1", deliveryId)).toMatchObject({ status: "delivered", attemptCount: 1 }),
      { interval: 50 },
    );
  });
});
