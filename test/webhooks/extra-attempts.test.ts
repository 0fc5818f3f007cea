import { describe, expect, it } from "vitest";
import type { Business } from "../../src/domain/access/businesses";
import { LEASE_MS } from "../../src/domain/webhooks/delivery-claim";
import { createBusiness } from "../helpers/fixtures";
import { call } from "../helpers/http";
import { keepingQueue } from "../helpers/keeping-queue";
import { receiverBox } from "../helpers/receiver";
import { attemptsOf, claimOne, consume, consumeBatch, deliveryRow, outboxOnly, subscribe } from "../helpers/webhooks";

// The attempt a partner asks for outside the retry schedule (redeliver; recover of a failed delivery), as the consumer
// makes it on a driven clock: owed by the delivery's row, made by any message of it, under a lease of its own, and
// never a second schedule (src/domain/webhooks/attempts.ts). The request goes through HTTP; its message goes to a
// queue that keeps it, so that each test runs the consumer itself.

async function deliveryTo(business: Business, apiKey: string, path: string) {
  const box = receiverBox("extra");
  const endpoint = await subscribe(apiKey, box.url(path), ["lead.created"]);
  const { deliveryIds } = await outboxOnly(business, [
    { event: "lead.created", data: { name: "Ana" }, endpointId: endpoint.id },
  ]);
  const id = deliveryIds[0];
  if (id === undefined) throw new Error("no delivery written");
  return { box, endpoint, id };
}

async function redeliver(apiKey: string, endpointId: number, deliveryId: number) {
  const response = await call(`/api/v1/webhooks/${endpointId}/deliveries/${deliveryId}/redeliver`, {
    key: apiKey,
    method: "POST",
    bindings: { WEBHOOK_DELIVERIES: keepingQueue },
  });
  await expect(response).toHaveStatus(202);
}

describe("an extra attempt in the consumer", async () => {
  const { business, apiKey } = await createBusiness();

  it("is made once: a duplicate message under its lease sends nothing, and it is made again only once the lease ran out", async () => {
    const { box, endpoint, id } = await deliveryTo(business, apiKey, "/fail-first/1");
    const T0 = Date.now();
    expect(await consume(id, T0)).toEqual({ acked: false, retryDelay: 60 });
    await redeliver(apiKey, endpoint.id, id);
    const T = Date.now();
    // The dying consumer: it took the extra attempt's lease and never recorded anything.
    expect(await claimOne(id, T)).toMatchObject({ id, kind: "extra", attemptCount: 1 });
    expect(await consume(id, T + LEASE_MS - 1000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(1);
    expect(await consume(id, T + LEASE_MS)).toEqual({ acked: true, retryDelay: undefined });
    expect(await consume(id, T + LEASE_MS)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(2);
    expect(await attemptsOf(id)).toHaveLength(2);
    // Delivered by it, its count as it was and its debt cleared; the scheduled message then sends nothing.
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 1, extraAttemptAt: null });
    expect(await consume(id, T0 + 60_000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(2);
  });

  it("waits for a message of its own when the batch's one message makes the scheduled attempt", async () => {
    const { box, endpoint, id } = await deliveryTo(business, apiKey, "/status/500");
    await redeliver(apiKey, endpoint.id, id);
    const T = Date.now();
    // Due and owed: the one claim of the batch is the scheduled attempt, whose message carries the schedule on.
    expect(await consumeBatch([id, id], T)).toEqual([
      { acked: false, retryDelay: 60 },
      { acked: true, retryDelay: undefined },
    ]);
    expect(await deliveryRow(id)).toMatchObject({ attemptCount: 1, extraAttemptAt: expect.any(String) });
    // The extra attempt's message: one attempt more, acked, and the schedule as the scheduled attempt left it.
    expect(await consume(id, T)).toEqual({ acked: true, retryDelay: undefined });
    expect(await deliveryRow(id)).toMatchObject({
      status: "pending",
      attemptCount: 1,
      nextAttemptAt: new Date(T + 60_000).toISOString(),
      extraAttemptAt: null,
    });
    expect(await box.recorded()).toHaveLength(2);
  });

  it("runs beside a scheduled attempt of the same delivery, and whichever succeeds, it stays delivered", async () => {
    const { box, endpoint, id } = await deliveryTo(business, apiKey, "/fail-first/1");
    await redeliver(apiKey, endpoint.id, id);
    const T = Date.now();
    // Two consumers at once: one takes the scheduled attempt, the other the extra one; one of the two is answered 500.
    const outcomes = await Promise.all([consume(id, T), consume(id, T + 1)]);
    expect(await box.recorded()).toHaveLength(2);
    expect((await attemptsOf(id)).map((attempt) => attempt.statusCode).sort()).toEqual([200, 500]);
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", extraAttemptAt: null });
    // At most one message goes on with a schedule, and it finds the delivery delivered.
    expect(outcomes.filter((outcome) => !outcome.acked).length).toBeLessThanOrEqual(1);
    expect(await consume(id, T + 60_000)).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(2);
  });

  it("is owed once more when asked for again while it is being made", async () => {
    // The receiver keeps the second request (the extra attempt) unanswered until the test releases it.
    const { box, endpoint, id } = await deliveryTo(business, apiKey, "/hold/2");
    // Delivered first, then asked for while its extra attempt is on its way.
    expect(await consume(id, Date.now())).toEqual({ acked: true, retryDelay: undefined });
    await redeliver(apiKey, endpoint.id, id);
    const inFlight = consume(id, Date.now());
    await box.arrived(2, 5_000);
    await redeliver(apiKey, endpoint.id, id);
    await box.release();
    expect(await inFlight).toEqual({ acked: true, retryDelay: undefined });
    // The attempt under way did not clear the request made during it.
    expect((await deliveryRow(id))?.extraAttemptAt).not.toBeNull();
    expect(await consume(id, Date.now())).toEqual({ acked: true, retryDelay: undefined });
    expect(await box.recorded()).toHaveLength(3);
    expect(await attemptsOf(id)).toHaveLength(3);
    expect(await deliveryRow(id)).toMatchObject({ status: "delivered", attemptCount: 1, extraAttemptAt: null });
  });
});
