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

/** Actions are refused on phone calls only: an MCP assistant talks in text (docs/decisions.md, Calls). */
export const actionsRunOn = (channel: Channel) => channel !== "phone";

export const intakesRunOn = (channel: Channel) => (CHAT_CHANNELS as readonly string[]).includes(channel);
