import type { Dependencies } from "../../dependencies";
import type { WindowUse } from "../../durable-objects/business-limits";
import { tooManyRequests } from "../../lib/api-error";
import { type BudgetUse, budgetUse } from "../../lib/rate-limit-fields";
import { HOUR_MS } from "../../lib/time";
import type { Business } from "../access/businesses";

/**
 * Sends on a partner's demand, per endpoint and clock hour (docs/decisions.md, Webhooks a partner can operate), so a
 * loop cannot flood the partner's own receiver: 60 redeliveries and test events (a minute's click), 5 recovers (each
 * may queue a month of failures). Test events count per business too, so re-creating an endpoint starts no new hour.
 * The owner's Send again is a person's click, not counted.
 */
export const SENDS_PER_HOUR = 60;
export const RECOVERS_PER_HOUR = 5;
export const TEST_EVENTS_PER_HOUR = 60;
/**
 * A sandbox business's redeliveries and test events together, across its endpoints (docs/guides/sandbox.md): a
 * sandbox is made without an account, so what one can make the service send is bounded per business, not only per
 * endpoint.
 */
export const SANDBOX_SENDS_PER_HOUR = 60;

/** `name`: the counter in BusinessLimits; `policy`: the RateLimit fields' name of its policy, one per kind of budget. */
export type Budget = { name: string; policy: string; limit: number; refusal: string };

/**
 * Counts one use of every budget in the business's BusinessLimits object (one per business: docs/architecture.md,
 * Storage and state), all or none; 429 with Retry-After and the RateLimit headers of a budget that is spent. Answers
 * every budget's use, for the headers of the 202: each policy the send was counted against (docs/rate-limits.md).
 */
export async function takeHourly(
  deps: Pick<Dependencies, "limits" | "clock">,
  businessId: string,
  budgets: Budget[],
): Promise<BudgetUse[]> {
  const { limits: namespace } = deps;
  const limits = namespace.get(namespace.idFromName(businessId));
  const uses = await limits.takeEach(
    budgets.map(({ name, limit }) => ({ name, limit })),
    HOUR_MS,
    deps.clock(),
  );
  const answers = budgets.map(({ policy, limit, refusal }, i) => {
    const use = uses[i] as WindowUse;
    return { use, refusal, budget: budgetUse(policy, limit, HOUR_MS / 1000, use) };
  });
  const spent = answers.find(({ use }) => !use.allowed);
  if (spent) throw tooManyRequests(spent.refusal, spent.budget);
  return answers.map(({ budget }) => budget);
}

const endpointSends = (endpointId: number): Budget => ({
  name: `webhook_sends:${endpointId}`,
  policy: "webhook_sends",
  limit: SENDS_PER_HOUR,
  refusal: `A webhook endpoint can be sent at most ${SENDS_PER_HOUR} redeliveries and test events an hour; try again when the hour is up.`,
});

/** A sandbox business's sends, counted with an endpoint's own. */
const sandboxSends = (business: Business): Budget[] =>
  business.sandbox
    ? [
        {
          name: "sandbox_sends",
          policy: "sandbox_sends",
          limit: SANDBOX_SENDS_PER_HOUR,
          refusal: `A sandbox business can be sent at most ${SANDBOX_SENDS_PER_HOUR} redeliveries and test events an hour, across its endpoints; try again when the hour is up.`,
        },
      ]
    : [];

/** A redelivery to the endpoint. */
export const takeSend = (deps: Dependencies, business: Business, endpointId: number) =>
  takeHourly(deps, business.id, [endpointSends(endpointId), ...sandboxSends(business)]);

/** A test event to the endpoint: the endpoint's sends, and the business's test events. */
export const takeTestEvent = (deps: Dependencies, business: Business, endpointId: number) =>
  takeHourly(deps, business.id, [
    endpointSends(endpointId),
    {
      name: "webhook_tests",
      policy: "webhook_tests",
      limit: TEST_EVENTS_PER_HOUR,
      refusal: `A business's webhook endpoints can be sent at most ${TEST_EVENTS_PER_HOUR} test events an hour together; try again when the hour is up.`,
    },
    ...sandboxSends(business),
  ]);

const endpointRecovers = (endpointId: number): Budget => ({
  name: `webhook_recovers:${endpointId}`,
  policy: "webhook_recovers",
  limit: RECOVERS_PER_HOUR,
  refusal: `A webhook endpoint can be recovered at most ${RECOVERS_PER_HOUR} times an hour; try again when the hour is up.`,
});

/** A recover of the endpoint. */
export const takeRecover = (deps: Dependencies, businessId: string, endpointId: number) =>
  takeHourly(deps, businessId, [endpointRecovers(endpointId)]);

/** What an app's budgets are counted with: the budgets' objects and the clock. */
export type AppLimits = Pick<Dependencies, "limits" | "clock">;

/**
 * An app endpoint's budgets (docs/guides/webhooks.md, Subscribing once as an app): those of one endpoint, counted
 * once for all its copies in the businesses, in an object of the app's own, apart from every business's.
 */
const appObject = (clientId: string) => `app:${clientId}`;

/** A redelivery to one of an app endpoint's copies. */
export const takeAppSend = (deps: AppLimits, clientId: string, appEndpointId: number) =>
  takeHourly(deps, appObject(clientId), [endpointSends(appEndpointId)]);

/** A recover of an app endpoint's copies. */
export const takeAppRecover = (deps: AppLimits, clientId: string, appEndpointId: number) =>
  takeHourly(deps, appObject(clientId), [endpointRecovers(appEndpointId)]);
