import type { Dependencies } from "../../dependencies";
import type { WindowUse } from "../../durable-objects/business-limits";
import { type BudgetUse, tooManyRequests } from "../../lib/errors";

const HOUR_MS = 3_600_000;

/**
 * Sends on a partner's demand, per endpoint and clock hour (docs/decisions.md, Webhooks a partner can operate):
 * redeliveries and test events together, and recovers. What they protect is the partner's own receiver: a loop that
 * calls them cannot flood it. 60 an hour is a redelivery a minute, more than anyone clicks or scripts by hand; a
 * recover can queue a month of failures at once, so 5 an hour. The owner's Send again in the dashboard is a person's
 * click, and is not counted.
 *
 * Test events are also counted per business, 60 an hour across its endpoints: an endpoint's own count ends with it,
 * and deleting and re-creating it (same URL, same receiver) must not start a new hour's worth.
 */
export const SENDS_PER_HOUR = 60;
export const RECOVERS_PER_HOUR = 5;
export const TEST_EVENTS_PER_HOUR = 60;

type Budget = { name: string; limit: number; refusal: string };

/**
 * Counts one use of every budget in the business's BusinessLimits object (one per business: docs/architecture.md,
 * Storage and state), all or none; 429 with Retry-After and the RateLimit headers of a budget that is spent. Answers
 * the budget with the fewest uses left, for the headers of the 202.
 */
async function take(deps: Dependencies, businessId: string, budgets: Budget[]): Promise<BudgetUse> {
  const { limits: namespace } = deps;
  const limits = namespace.get(namespace.idFromName(businessId));
  const uses = await limits.takeEach(
    budgets.map(({ name, limit }) => ({ name, limit })),
    HOUR_MS,
  );
  // The headers name this budget's own policy, in place of the request budget's (RateLimit-Policy: limit;w=seconds).
  const answers = budgets.map(({ limit, refusal }, i) => {
    const use = uses[i] as WindowUse;
    return { use, refusal, budget: { ...use, policy: `${limit};w=${HOUR_MS / 1000}` } };
  });
  const spent = answers.find(({ use }) => !use.allowed);
  if (spent) throw tooManyRequests(spent.refusal, spent.budget);
  const tightest = answers.reduce((a, b) => (b.use.remaining < a.use.remaining ? b : a));
  return tightest.budget;
}

const endpointSends = (endpointId: number): Budget => ({
  name: `webhook_sends:${endpointId}`,
  limit: SENDS_PER_HOUR,
  refusal: `A webhook endpoint can be sent at most ${SENDS_PER_HOUR} redeliveries and test events an hour; try again when the hour is up.`,
});

/** A redelivery to the endpoint. */
export const takeSend = (deps: Dependencies, businessId: string, endpointId: number) =>
  take(deps, businessId, [endpointSends(endpointId)]);

/** A test event to the endpoint: the endpoint's sends, and the business's test events. */
export const takeTestEvent = (deps: Dependencies, businessId: string, endpointId: number) =>
  take(deps, businessId, [
    endpointSends(endpointId),
    {
      name: "webhook_tests",
      limit: TEST_EVENTS_PER_HOUR,
      refusal: `A business's webhook endpoints can be sent at most ${TEST_EVENTS_PER_HOUR} test events an hour together; try again when the hour is up.`,
    },
  ]);

/** A recover of the endpoint. */
export const takeRecover = (deps: Dependencies, businessId: string, endpointId: number) =>
  take(deps, businessId, [
    {
      name: `webhook_recovers:${endpointId}`,
      limit: RECOVERS_PER_HOUR,
      refusal: `A webhook endpoint can be recovered at most ${RECOVERS_PER_HOUR} times an hour; try again when the hour is up.`,
    },
  ]);
