import { z } from "@hono/zod-openapi";
import { timestamp } from "../lib/validation";
import type { EventName } from "../names-and-limits";
import { ActionObject } from "./actions";
import { BookingObject } from "./booking";
import { AnswerObject, IntakeResponseObject } from "./intake-responses";
import { IntakeObject } from "./intakes";
import { OrderObject } from "./order";
import { BookingChange, OrderChange, OTHER_CHANGES, PaymentReceivedData } from "./platform-changes";
import { EnvelopeObject } from "./webhook-operations";

/*
 * Each event's `data` as it is delivered (docs/guides/webhooks.md, The events; docs/decisions.md, The contract in a
 * partner's tools), built from the schemas the service itself validates and answers with, so that the document's
 * `webhooks` section cannot drift from them. src/domain/webhooks/samples.ts holds one sample of each; a test parses
 * every sample with these schemas.
 */

const withBooking = z.object({ booking: BookingObject });
const withOrder = z.object({ order: OrderObject });
/** The report's `reason` (platform-changes.ts), always present once delivered: `null` when none was given. */
const reason = BookingChange.shape.reason.unwrap();

/** src/domain/platform/changes.ts, bookingEvents: a cancellation, or a no-show reported as one. */
const BookingCancelled = z.union([
  withBooking.extend({ cancelled_by: BookingChange.shape.cancelled_by.unwrap(), reason }),
  withBooking.extend({ action: z.literal("no_show"), reason }),
]);

/** Why a record was switched: src/domain/webhooks/lifecycle.ts, `LifecycleReason`, says what each means. */
const LIFECYCLE_REASONS = ["owner", "changed", "credential_revoked", "removed"] as const;
export type LifecycleReason = (typeof LIFECYCLE_REASONS)[number];
const lifecycleReason = z.enum(LIFECYCLE_REASONS).openapi({
  description:
    "owner: switched in the dashboard; changed: a PATCH switched it off, or its MCP tool changed so that it can no longer be an action; credential_revoked: its key was revoked; removed: its MCP server no longer lists its tool",
});

/** docs/guides/intakes.md, intake.completed. */
const IntakeCompleted = z.object({
  intake: IntakeObject.pick({ id: true, name: true, title: true }),
  response_id: IntakeResponseObject.shape.id,
  conversation: IntakeResponseObject.shape.conversation,
  answers: z.array(AnswerObject),
  completed_at: timestamp,
});

export const EVENT_DATA = {
  "booking.created": withBooking,
  "booking.rescheduled": withBooking.extend({
    previous: BookingObject.pick({ date: true, time: true }).openapi({ description: "The date and time before" }),
  }),
  "booking.cancelled": BookingCancelled,
  "booking.completed": withBooking.extend({ completed_by: BookingChange.shape.completed_by }),
  "order.created": withOrder,
  "order.preparing": withOrder,
  "order.ready": withOrder,
  "order.dispatched": withOrder,
  "order.fulfilled": withOrder,
  "order.cancelled": withOrder.extend({ reason: OrderChange.shape.reason.unwrap() }),
  "payment.received": PaymentReceivedData,
  "lead.created": OTHER_CHANGES["lead.created"].shape.data,
  "review.created": OTHER_CHANGES["review.created"].shape.data,
  ping: z.object({ message: z.string() }),
  "intake.completed": IntakeCompleted,
  "action.enabled": z.object({ action: ActionObject, reason: lifecycleReason }),
  "action.disabled": z.object({ action: ActionObject, reason: lifecycleReason }),
  "action.change_accepted": z.object({
    action: ActionObject.openapi({ description: "The action as the Secretary uses it from now on" }),
  }),
  "intake.enabled": z.object({ intake: IntakeObject, reason: lifecycleReason }),
  "intake.disabled": z.object({ intake: IntakeObject, reason: lifecycleReason }),
  "app.connected": z.object({
    connected_at: timestamp.openapi({ description: "When the owner approved the app: the connection began" }),
  }),
  "app.disconnected": z.object({
    disconnected_at: timestamp.openapi({ description: "When the owner disconnected the app: nothing follows it" }),
  }),
} satisfies Record<EventName, z.ZodType>;

/**
 * Each event's `data` as its emitters build it and receivers get it (the schemas' output): `EventDraft`
 * (src/domain/webhooks/event-draft.ts) holds one of these, so that emitting an event with another's data fails tsc.
 */
export type EventDataMap = { [E in EventName]: z.output<(typeof EVENT_DATA)[E]> };
export type EventData<E extends EventName> = EventDataMap[E];

/** `booking.created` → `BookingCreated`: the stem of the event's names in the document. */
export const pascalCase = (event: EventName) =>
  event.replace(/(^|[._])([a-z])/g, (_, __, letter: string) => letter.toUpperCase());

/** The envelope of one event (docs/guides/webhooks.md, The request), `event` and `data` narrowed to that event's. */
export const eventEnvelope = (event: EventName) =>
  z
    .object({ ...EnvelopeObject.shape, event: z.literal(event), data: EVENT_DATA[event] })
    .openapi(`${pascalCase(event)}Event`);
