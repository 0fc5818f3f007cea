import { ALL_EVENTS, type EventName } from "../../names-and-limits";

/**
 * `intake.completed` is opt-in: `*` does not include it (docs/guides/webhooks.md, Subscribing). No other event is
 * opt-in, so `*` means every other event
 * (docs/decisions.md, Decisions the design made where the contract is silent).
 */
export const OPT_IN_EVENTS: ReadonlySet<EventName> = new Set(["intake.completed"]);

/** Whether an endpoint subscribed to `subscribed` receives `event` (ownership of intakes is checked by the caller). */
export function subscribes(subscribed: readonly string[], event: EventName): boolean {
  if (subscribed.includes(event)) return true;
  return subscribed.includes(ALL_EVENTS) && !OPT_IN_EVENTS.has(event);
}
