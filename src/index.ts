import { app } from "./app";
import { SHARD_NAMES } from "./db/shards";
import { dependenciesOfShards, globalDependencies } from "./dependencies-from-env";
import { refreshDueMcpServers } from "./domain/actions/mcp-refresh";
import { removeExpiredAppTokens } from "./domain/oauth/app-tokens";
import { removeUnapprovedClients } from "./domain/oauth/client-cleanup";
import { applyRetention } from "./domain/operations/retention";
import { removeUnusedSandboxes } from "./domain/sandbox/cleanup";
import { sweepOutbox } from "./domain/webhooks/outbox/sweep";
import type { Env } from "./env";
import { phraseZodMessages } from "./lib/zod-messages";
import { deliverWebhooks } from "./queues/deliver-webhooks";
import type { DeliveryMessage } from "./queues/delivery-message";

// Every 400 a zod schema produces reads as one sentence naming the input (lib/zod-messages.ts; docs/errors.md).
phraseZodMessages();

export { BusinessLimits } from "./durable-objects/business-limits";
export { IntakeConversation } from "./durable-objects/intake-conversation";
export { ListeningSession } from "./durable-objects/listening-session";
export { SignInThrottle } from "./durable-objects/sign-in-throttle";
export { RuntimeApi } from "./runtime/runtime-entrypoint";

export default {
  fetch: app.fetch,
  queue: (batch, env, ctx) =>
    deliverWebhooks(
      batch,
      dependenciesOfShards(env, (work) => ctx.waitUntil(work)),
    ),
  scheduled: async (_controller, env, ctx) => {
    const dependenciesOf = dependenciesOfShards(env, (work) => ctx.waitUntil(work));
    // Independent chores, each shard's outbox sweep and retention on its own database, and the OAuth clients' cleanup
    // on the global one (docs/scaling.md, The queue, the consumer and the cron): one failing, or one shard's
    // database, does not keep the others from their run; the failure is still reported once all have run.
    const chores = await Promise.allSettled([
      ...SHARD_NAMES.flatMap((shard) => {
        const deps = dependenciesOf(shard);
        return [sweepOutbox(deps), applyRetention(deps), removeUnusedSandboxes(deps), refreshDueMcpServers(deps)];
      }),
      removeUnapprovedClients(globalDependencies(env, (work) => ctx.waitUntil(work))),
      removeExpiredAppTokens(globalDependencies(env, (work) => ctx.waitUntil(work))),
    ]);
    for (const chore of chores) if (chore.status === "rejected") throw chore.reason;
  },
} satisfies ExportedHandler<Env, DeliveryMessage>;
