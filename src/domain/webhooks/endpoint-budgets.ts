import type { BusinessLimits } from "../../durable-objects/business-limits";
import { type BudgetUse, tooManyRequests } from "../../lib/errors";

type BusinessLimitsNamespace = DurableObjectNamespace<BusinessLimits>;

const HOUR_MS = 3_600_000;

/**
 * Sends on a partner's demand, per endpoint and clock hour (docs/decisions.md): redeliveries and test events together,
 * and recovers. What they protect is the partner's own receiver: a loop that calls them cannot flood it. 60 an hour
 * is a redelivery a minute, more than anyone clicks or scripts by hand; a recover can queue a month of failures at
 * once, so 5 an hour. The owner's Send again in the dashboard is a person's click, and is not counted.
 */
export const SENDS_PER_HOUR = 60;
export const RECOVERS_PER_HOUR = 5;

/**
 * Counts one use of `name` in the business's BusinessLimits object (one per business, DESIGN.md), keyed by the
 * endpoint; 429 with Retry-After and the RateLimit headers past the limit. Answers the budget left, for the headers
 * of the 202.
 */
async function take(
  namespace: BusinessLimitsNamespace,
  businessId: string,
  name: string,
  limit: number,
  refusal: string,
): Promise<BudgetUse> {
  const limits = namespace.get(namespace.idFromName(businessId));
  const use = await limits.take(name, limit, HOUR_MS);
  // The headers name this budget's own policy, in place of the request budget's (RateLimit-Policy: limit;w=seconds).
  const budget = { ...use, policy: `${limit};w=${HOUR_MS / 1000}` };
  if (!use.allowed) throw tooManyRequests(refusal, budget);
  return budget;
}

/** A redelivery or a test event to the endpoint. */
export const takeSend = (namespace: BusinessLimitsNamespace, businessId: string, endpointId: number) =>
  take(
    namespace,
    businessId,
    `webhook_sends:${endpointId}`,
    SENDS_PER_HOUR,
    `A webhook endpoint can be sent at most ${SENDS_PER_HOUR} redeliveries and test events an hour; try again when the hour is up.`,
  );

/** A recover of the endpoint. */
export const takeRecover = (namespace: BusinessLimitsNamespace, businessId: string, endpointId: number) =>
  take(
    namespace,
    businessId,
    `webhook_recovers:${endpointId}`,
    RECOVERS_PER_HOUR,
    `A webhook endpoint can be recovered at most ${RECOVERS_PER_HOUR} times an hour; try again when the hour is up.`,
  );
