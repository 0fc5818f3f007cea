import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import worker from "../../src/index";

/**
 * One run of the Worker's cron trigger, as the runtime makes it, waited for with the work it left to `waitUntil`;
 * `bindings` override the Worker's bindings for this run, e.g. a shard's database that fails.
 */
export async function runScheduled(bindings: Partial<typeof env> = {}): Promise<void> {
  const ctx = createExecutionContext();
  try {
    await worker.scheduled(
      createScheduledController({ cron: "* * * * *", scheduledTime: Date.now() }),
      { ...env, ...bindings },
      ctx,
    );
  } finally {
    await waitOnExecutionContext(ctx);
  }
}
