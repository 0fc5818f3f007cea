import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { type Principal, principalKey } from "../domain/access/principals";
import { tooManyRequests } from "../lib/errors";
import { type BudgetUse, policyItem, rateLimitHeaders, refusedPerMinute } from "../lib/rate-limit-fields";

/** The general budget of every partner credential: `[[ratelimits]] PRINCIPAL_RATE_LIMIT` in wrangler.toml. */
export const REQUESTS_PER_MINUTE = 600;
const WINDOW_SECONDS = 60;
const REQUESTS_POLICY = "requests";
/** The request budget as `RateLimit-Policy` states it on every answer. */
const REQUESTS_POLICY_ITEM = policyItem(REQUESTS_POLICY, REQUESTS_PER_MINUTE, WINDOW_SECONDS);

/**
 * A per-principal budget through Cloudflare's Rate Limiting binding, which answers in the same location without a
 * round trip (docs/decisions.md, Knowledge and limits). It says only yes or no, so every answer names the policy
 * (`RateLimit-Policy`) and only its 429 says where it stands (`RateLimit`, nothing left for at most the window):
 * a remainder the service does not know is not guessed (docs/rate-limits.md). Exact per-business counts live in
 * BusinessLimits, and the answers they govern state them (`announceBudget`).
 */
export async function spendRequestBudget(c: Context<AppEnv>, principal: Principal): Promise<void> {
  // One budget per API key, and one per app connection (all the tokens of one app and business together).
  const key = principalKey(principal);
  const refused = await refusedPerMinute(c.env.PRINCIPAL_RATE_LIMIT, key, REQUESTS_POLICY, REQUESTS_PER_MINUTE);
  if (refused) {
    throw tooManyRequests(
      `Too many requests: a credential can make ${REQUESTS_PER_MINUTE} requests a minute.`,
      refused,
    );
  }
  c.header("RateLimit-Policy", REQUESTS_POLICY_ITEM);
}

/**
 * An answer counted against budgets of its own as well (knowledge pushes, an endpoint's sends and the business's test
 * events): their policies join the request budget's in `RateLimit-Policy`, and `RateLimit` says what is left of each.
 */
export function announceBudgets(c: Context<AppEnv>, uses: BudgetUse[]) {
  for (const use of uses) {
    for (const [name, value] of rateLimitHeaders(use)) c.header(name, value, { append: true });
  }
}
