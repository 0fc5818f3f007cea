import { app } from "./app";
import { dependenciesFromEnv } from "./dependencies-from-env";
import { removeUnapprovedClients } from "./domain/oauth/client-cleanup";
import { applyRetention } from "./domain/operations/retention";
import { sweepOutbox } from "./domain/webhooks/outbox/sweep";
import type { Env } from "./env";
import { phraseZodMessages } from "./lib/zod-messages";
import { deliverWebhooks } from "./queues/deliver-webhooks";
import type { DeliveryMessage } from "./queues/delivery-message";

// Every 400 a zod schema produces reads as a sentence of the spec (lib/zod-messages.ts), on every surface.
phraseZodMessages();

export { BusinessLimits } from "./durable-objects/business-limits";
export { IntakeConversation } from "./durable-objects/intake-conversation";
export { SignInThrottle } from "./durable-objects/sign-in-throttle";
export { RuntimeApi } from "./runtime/runtime-entrypoint";

export default {
  fetch: app.fetch,
  queue: (batch, env, ctx) =>
    deliverWebhooks(
      batch,
      dependenciesFromEnv(env, (work) => ctx.waitUntil(work)),
    ),
  scheduled: async (_controller, env, ctx) => {
    const deps = dependenciesFromEnv(env, (work) => ctx.waitUntil(work));
    // Independent chores: one failing does not keep the others from their run; the failure is still reported.
    const chores = await Promise.allSettled([sweepOutbox(deps), removeUnapprovedClients(deps), applyRetention(deps)]);
    for (const chore of chores) if (chore.status === "rejected") throw chore.reason;
  },
} satisfies ExportedHandler<Env, DeliveryMessage>;
