import { CHAT_CHANNELS, type Channel } from "../../names-and-limits";

/** Actions are refused on phone calls only: an MCP assistant talks in text (docs/decisions.md, Calls). */
export const actionsRunOn = (channel: Channel) => channel !== "phone";

export const intakesRunOn = (channel: Channel) => (CHAT_CHANNELS as readonly string[]).includes(channel);
