/*
 * The names and limits of the partner contract that the request schemas (src/schemas/) and the rules (src/domain/)
 * both need. A leaf: it imports nothing, so that schemas never import the domain for them and imports point one way
 * (docs/architecture.md, Layout).
 */

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

/** The subscription to every event but the opt-in ones (spec: `events` omitted or `["*"]`). */
export const ALL_EVENTS = "*";

/**
 * The channels a Secretary conversation runs on. Spec, What the service does: intakes run on the eight chat
 * channels, not on phone calls nor through AI assistants connected to the business (MCP); connected actions work on
 * the text channels and not on phone calls.
 */
export const CHAT_CHANNELS = [
  "chat_page",
  "website_widget",
  "whatsapp",
  "sms",
  "telegram",
  "instagram",
  "messenger",
  "email",
] as const;

export const CHANNELS = [...CHAT_CHANNELS, "mcp", "phone"] as const;

export type Channel = (typeof CHANNELS)[number];

/** The longest the previous secret keeps signing after a rotation, and how long it does when the partner does not say. */
export const MAX_PREVIOUS_SECRET_SECONDS = 86_400;
