import type { Budget } from "../webhooks/endpoint-budgets";

/*
 * What one sandbox business may cause an hour (docs/guides/sandbox.md, Budgets): a sandbox is made without an account,
 * so each of its operations is bounded per business and clock hour, counted in its BusinessLimits object, and answered
 * 429 with Retry-After past it. With at most 5 endpoints, an hour of events is at most 300 deliveries.
 */

/** Events caused: `POST /sandbox/events` and the customers' conversations of `POST /sandbox/intakes/{id}/conversations`. */
export const SANDBOX_EVENTS_PER_HOUR = 60;
/** The Secretary's calls of the business's actions: each is a request to the partner's URL, its answer returned. */
export const SANDBOX_ACTION_CALLS_PER_HOUR = 60;

export const SANDBOX_EVENTS: Budget = {
  name: "sandbox_events",
  policy: "sandbox_events",
  limit: SANDBOX_EVENTS_PER_HOUR,
  refusal: `A sandbox business can cause at most ${SANDBOX_EVENTS_PER_HOUR} events an hour (sandbox events and intake conversations together); try again when the hour is up.`,
};

export const SANDBOX_ACTION_CALLS: Budget = {
  name: "sandbox_action_calls",
  policy: "sandbox_action_calls",
  limit: SANDBOX_ACTION_CALLS_PER_HOUR,
  refusal: `A sandbox business can call its actions at most ${SANDBOX_ACTION_CALLS_PER_HOUR} times an hour; try again when the hour is up.`,
};
