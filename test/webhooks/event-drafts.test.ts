import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { withDataFromSql } from "../../src/domain/webhooks/event-draft";
import type { EventDraft } from "../../src/domain/webhooks/outbox/write";
import { sampleEvent } from "../../src/domain/webhooks/samples";
import { EVENT_NAMES } from "../../src/names-and-limits";
import { EVENT_DATA } from "../../src/schemas/events";

/*
 * An event's data is its event's (src/domain/webhooks/event-draft.ts). The `@ts-expect-error` lines are the test:
 * `npm run typecheck` fails if one of them type-checks.
 */
describe("event drafts typed by their event", () => {
  const { data: booking } = sampleEvent("booking.created");
  const { data: order } = sampleEvent("order.created");
  const { intake } = sampleEvent("intake.enabled").data;
  const completed = { ...sampleEvent("intake.completed").data, response_id: null };

  it("takes an event's own data only", () => {
    const drafts: EventDraft[] = [
      { event: "booking.created", data: booking },
      // @ts-expect-error booking.created carries a booking, not an order
      { event: "booking.created", data: order },
      // @ts-expect-error intake.enabled carries its reason
      { event: "intake.enabled", data: { intake } },
      // @ts-expect-error response_id is the response's id, never null in a draft of complete data
      { event: "intake.completed", data: completed },
    ];
    expect(drafts).toHaveLength(4);
  });

  it("takes the members set by SQL as expressions of their own type, and null in data until then", () => {
    const draft = withDataFromSql({
      event: "intake.completed",
      data: completed,
      dataFromSql: { response_id: sql<number>`1` },
    });
    expect(draft.dataFromSql).toHaveProperty("response_id");
    // @ts-expect-error response_id is a number
    withDataFromSql({ event: "intake.completed", data: completed, dataFromSql: { response_id: sql<string>`'1'` } });
    const twoFromSql = { response_id: sql<number>`1`, completed_at: sql<string>`'2026-12-03T09:41:27.000Z'` };
    // @ts-expect-error completed_at is set by SQL here, so it is null in data
    withDataFromSql({ event: "intake.completed", data: completed, dataFromSql: twoFromSql });
    // @ts-expect-error response_id is null in data: SQL must set it
    withDataFromSql({ event: "intake.completed", data: completed, dataFromSql: {} });
  });

  it.each(EVENT_NAMES)("has a sample of %s that its schema accepts", (event) => {
    const sample = sampleEvent(event);
    expect(sample.event).toBe(event);
    expect(EVENT_DATA[event].safeParse(sample.data).error).toBeUndefined();
  });
});
