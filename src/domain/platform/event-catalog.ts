/** Spec, Events and their data: every event name a webhook endpoint can name. */
export const EVENT_NAMES = [
  "booking.created",
  "booking.rescheduled",
  "booking.cancelled",
  "booking.completed",
  "order.created",
  "order.preparing",
  "order.ready",
  "order.dispatched",
  "order.fulfilled",
  "order.cancelled",
  "payment.received",
  "lead.created",
  "review.created",
  "ping",
  "intake.completed",
  // DESIGN.md, Beyond the spec: Lifecycle events, delivered only to the owner side concerned.
  "action.enabled",
  "action.disabled",
  "action.change_accepted",
  "intake.enabled",
  "intake.disabled",
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

/** Spec, intake.completed: "Opt-in: `*` does not include it". DESIGN.md: no other opt-in events. */
export const OPT_IN_EVENTS: ReadonlySet<EventName> = new Set(["intake.completed"]);

export const ALL_EVENTS = "*";

/** Whether an endpoint subscribed to `subscribed` receives `event` (ownership of intakes is checked by the caller). */
export function subscribes(subscribed: readonly string[], event: EventName): boolean {
  if (subscribed.includes(event)) return true;
  return subscribed.includes(ALL_EVENTS) && !OPT_IN_EVENTS.has(event);
}
