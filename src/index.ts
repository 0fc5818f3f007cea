import { app } from "./app";
import type { Env } from "./env";

export { BusinessLimits } from "./durable-objects/business-limits";
export { IntakeConversation } from "./durable-objects/intake-conversation";
export { RuntimeApi } from "./runtime/runtime-entrypoint";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
