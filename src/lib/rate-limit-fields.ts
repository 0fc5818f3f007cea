/**
 * Where a request stands against one named quota policy: what the RateLimit header fields of
 * draft-ietf-httpapi-ratelimit-headers-10 say (§3 RateLimit-Policy, §4 RateLimit). `policy` is the policy's name,
 * `quota` its units per `windowSeconds`, `remaining` the units left and `resetInSeconds` when they are restored.
 */
export type BudgetUse = {
  policy: string;
  quota: number;
  windowSeconds: number;
  remaining: number;
  resetInSeconds: number;
};

/** A policy as RateLimit-Policy lists it (draft §3.1): a String item with `q` and `w`, `"requests";q=600;w=60`. */
export const policyItem = (policy: string, quota: number, windowSeconds: number) =>
  `"${policy}";q=${quota};w=${windowSeconds}`;

/**
 * Both fields for a budget whose remainder is known: the policy (appended to the request budget's, which every
 * partner answer names) and its standing (draft §4.1: `r` remaining, `t` seconds until reset). They are appended,
 * never set, so that one answer lists every policy it was counted against (docs/rate-limits.md).
 */
export function rateLimitHeaders(use: BudgetUse): [name: string, value: string][] {
  return [
    ["RateLimit-Policy", policyItem(use.policy, use.quota, use.windowSeconds)],
    ["RateLimit", `"${use.policy}";r=${use.remaining};t=${use.resetInSeconds}`],
  ];
}

/** A counted use of a windowed budget (BusinessLimits) as the fields state it, under the policy's name. */
export const budgetUse = (
  policy: string,
  quota: number,
  windowSeconds: number,
  use: { remaining: number; resetInSeconds: number },
): BudgetUse => ({ policy, quota, windowSeconds, remaining: use.remaining, resetInSeconds: use.resetInSeconds });

/**
 * Counts one use of `key` against a per-minute Rate Limiting binding (`[[ratelimits]]` in wrangler.toml), which says
 * only yes or no. Refused, it answers the use a 429 states (`tooManyRequests`, src/lib/api-error.ts): nothing left, back
 * within the minute; admitted, undefined. The caller throws, since src/lib/api-error.ts builds on this module.
 */
export async function refusedPerMinute(
  limiter: RateLimit,
  key: string,
  policy: string,
  quota: number,
): Promise<BudgetUse | undefined> {
  const { success } = await limiter.limit({ key });
  if (success) return undefined;
  return { policy, quota, windowSeconds: 60, remaining: 0, resetInSeconds: 60 };
}
