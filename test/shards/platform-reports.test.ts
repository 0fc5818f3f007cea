import { exports } from "cloudflare:workers";
import { and, eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { bookings, events, webhookDeliveries } from "../../src/db/schema";
import { createBusiness } from "../helpers/fixtures";
import { json } from "../helpers/http";
import { reportChange } from "../helpers/platform";
import { type Emitted, newBooking } from "../helpers/platform-changes";
import { receiverBox } from "../helpers/receiver";
import { REGIONS, shardsHolding } from "../helpers/shards";
import { deliveryRowIn, subscribe } from "../helpers/webhooks";

// The core platform's report names its business in the path: it is stored in that business's shard, found in the
// directory, and its deliveries are sent from there (docs/scaling.md, Regional shards).

describe.each(REGIONS)("a platform report for a business in %s", async (shard) => {
  const { business, apiKey } = await createBusiness({ shard });
  const box = receiverBox(`report-${shard}`);
  const endpoint = await subscribe(apiKey, box.url("/ok"), ["booking.created"]);
  const bookingOfBusiness = (id: number) => and(eq(bookings.businessId, business.id), eq(bookings.id, id));

  it("stores the booking, its event and its delivery in the business's shard only", async () => {
    const booking = newBooking();
    const response = await reportChange(business.id, { booking });
    await expect(response).toHaveStatus(201);
    const [created] = (await json<Emitted>(response)).events;
    if (!created) throw new Error("no event emitted");

    expect(await shardsHolding(bookings, bookingOfBusiness(booking.id))).toEqual([shard]);
    expect(await shardsHolding(events, eq(events.id, created.id))).toEqual([shard]);
    expect(await shardsHolding(webhookDeliveries, eq(webhookDeliveries.eventId, created.id))).toEqual([shard]);
  });

  it("has its delivery sent through the queue from its shard, and recorded there", async () => {
    const booking = newBooking();
    const [created] = (await json<Emitted>(await reportChange(business.id, { booking }))).events;
    if (!created) throw new Error("no event emitted");

    const request = await vi.waitFor(
      async () => {
        const found = (await box.recorded()).find((candidate) => JSON.parse(candidate.body).id === created.id);
        if (!found) throw new Error(`event ${created.id} not delivered yet`);
        return found;
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(JSON.parse(request.body)).toMatchObject({ event: "booking.created", data: { booking } });
    const deliveryId = Number(request.headers["x-service-delivery"]);
    await vi.waitFor(
      async () =>
        expect(await deliveryRowIn(shard, deliveryId)).toMatchObject({
          eventId: created.id,
          endpointId: endpoint.id,
          status: "delivered",
          attemptCount: 1,
        }),
      { timeout: 10_000, interval: 50 },
    );
  });

  it("is stored in its shard when reported through the RPC entrypoint too", async () => {
    const booking = newBooking();
    const result = await exports.RuntimeApi.reportChange(business.id, { booking });
    expect(result).toMatchObject({ ok: true, value: [{ event: "booking.created" }] });
    expect(await shardsHolding(bookings, bookingOfBusiness(booking.id))).toEqual([shard]);
  });
});
