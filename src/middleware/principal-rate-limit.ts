import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { type Principal, principalKey } from "../domain/access/principals";
import { tooManyRequests } from "../lib/errors";

/** The general budget of every partner credential: `[[ratelimits]] PRINCIPAL_RATE_LIMIT` in wrangler.toml. */
export const REQUESTS_PER_MINUTE = 600;
const POLICY = `${REQUESTS_PER_MINUTE};w=60`;

/**
 * A per-principal budget through Cloudflare's Rate Limiting binding, which answers in the same location without a
 * round trip (docs/decisions.md, Knowledge and limits). It says only yes or no, so responses state the policy
 * (`RateLimit-Policy`) rather than an exact remainder; exact per-business counts live in BusinessLimits.
 */
export async function spendRequestBudget(c: Context<AppEnv>, principal: Principal): Promise<void> {
  // One budget per API key, and one per app connection (all the tokens of one app and business together).
  const { success } = await c.env.PRINCIPAL_RATE_LIMIT.limit({ key: principalKey(principal) });
  if (!success) {
    throw tooManyRequests(`Too many requests: a credential can make ${REQUESTS_PER_MINUTE} requests a minute.`, {
      limit: REQUESTS_PER_MINUTE,
      remaining: 0,
      resetInSeconds: 60,
      policy: POLICY,
    });
  }
  c.header("RateLimit-Policy", POLICY);
}
