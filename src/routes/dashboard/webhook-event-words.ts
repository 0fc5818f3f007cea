import { OPT_IN_EVENTS } from "../../domain/webhooks/event-catalog";
import { ALL_EVENTS, type EventName } from "../../names-and-limits";

/**
 * Every event name in the owner's words, written once: the webhooks pages say what an endpoint receives without the
 * contract's names (docs/decisions.md, The owner's dashboard). A `Record` over the names, so a new event needs its words.
 */
const EVENT_WORDS: Record<EventName, string> = {
  "booking.created": "new bookings",
  "booking.rescheduled": "rescheduled bookings",
  "booking.cancelled": "cancelled bookings",
  "booking.completed": "completed bookings",
  "order.created": "new orders",
  "order.preparing": "orders being prepared",
  "order.ready": "orders ready",
  "order.dispatched": "dispatched orders",
  "order.fulfilled": "fulfilled orders",
  "order.cancelled": "cancelled orders",
  "payment.received": "payments received",
  "lead.created": "new leads",
  "review.created": "new reviews",
  ping: "test events",
  "intake.completed": "intake answers",
  "action.enabled": "actions switched on",
  "action.disabled": "actions switched off",
  "action.change_accepted": "accepted action changes",
  "intake.enabled": "intakes switched on",
  "intake.disabled": "intakes switched off",
  "app.connected": "the app connected",
  "app.disconnected": "the app disconnected",
};

/** One event name in words; a name the table does not know (none is stored) reads as itself. */
export const eventInWords = (name: string): string => EVENT_WORDS[name as EventName] ?? name;

/**
 * What an endpoint's subscription receives, in words: `*` is every event but the opt-in `intake.completed`
 * (docs/guides/webhooks.md, Subscribing), then any name listed besides it.
 */
export function eventsInWords(subscribed: readonly string[]): string {
  const named = subscribed.filter((name) => name !== ALL_EVENTS).map(eventInWords);
  if (!subscribed.includes(ALL_EVENTS)) return named.join(", ");
  const except = [...OPT_IN_EVENTS].filter((name) => !subscribed.includes(name)).map(eventInWords);
  const every = except.length === 0 ? "every event" : `every event except ${except.join(", ")}`;
  return [every, ...named].join(", ");
}
