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
  // Lifecycle events, delivered only to the owner side concerned (docs/architecture.md, Lifecycle events).
  "action.enabled",
  "action.disabled",
  "action.change_accepted",
  "intake.enabled",
  "intake.disabled",
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

/**
 * Spec, intake.completed: "Opt-in: `*` does not include it". No other event is opt-in, so `*` means every other event
 * (docs/decisions.md, Decisions the design made where the contract is silent).
 */
export const OPT_IN_EVENTS: ReadonlySet<EventName> = new Set(["intake.completed"]);

export const ALL_EVENTS = "*";

/** Whether an endpoint subscribed to `subscribed` receives `event` (ownership of intakes is checked by the caller). */
export function subscribes(subscribed: readonly string[], event: EventName): boolean {
  if (subscribed.includes(event)) return true;
  return subscribed.includes(ALL_EVENTS) && !OPT_IN_EVENTS.has(event);
}
