import { app } from "./app";
import type { Env } from "./env";
import { phraseZodMessages } from "./lib/zod-messages";
import { deliverWebhooks } from "./queues/deliver-webhooks";
import type { DeliveryMessage } from "./queues/delivery-message";
import { sweepOutbox } from "./queues/outbox-sweep";

// Every 400 a zod schema produces reads as a sentence of the spec (lib/zod-messages.ts), on every surface.
phraseZodMessages();

export { BusinessLimits } from "./durable-objects/business-limits";
export { IntakeConversation } from "./durable-objects/intake-conversation";
export { RuntimeApi } from "./runtime/runtime-entrypoint";

export default {
  fetch: app.fetch,
  queue: (batch, env) => deliverWebhooks(batch, env),
  scheduled: async (_controller, env) => {
    await sweepOutbox(env);
  },
} satisfies ExportedHandler<Env, DeliveryMessage>;
