/*
 * The names and limits of the partner contract that the request schemas (src/schemas/) and the rules (src/domain/)
 * both need. A leaf: it imports nothing, so that schemas never import the domain for them and imports point one way
 * (docs/architecture.md, Layout).
 */

/** Every event name a webhook endpoint can name (docs/guides/webhooks.md, The events). */
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
  // Told to an app's own side when an owner connects it or disconnects it (docs/guides/webhooks.md, Subscribing once
  // as an app).
  "app.connected",
  "app.disconnected",
] as const;

export type EventName = (typeof EVENT_NAMES)[number];

/** Every event but the opt-in ones: `events` omitted or `["*"]` (docs/guides/webhooks.md, Subscribing). */
export const ALL_EVENTS = "*";

/**
 * The channels a Secretary conversation runs on. Intakes run on the eight chat channels, never on phone calls nor
 * through assistants connected over MCP (docs/guides/intakes.md, How a conversation runs); actions on every channel
 * but phone calls (docs/guides/connected-actions.md, Registering an action).
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
