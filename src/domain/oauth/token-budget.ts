import { rateLimitHeaders } from "../../lib/rate-limit-fields";
import type { OAuthClient } from "./clients";

/** `[[ratelimits]] TOKEN_RATE_LIMIT` in wrangler.toml: token requests per client (docs/oauth.md, Token budget). */
export const TOKEN_REQUESTS_PER_MINUTE = 60;
const WINDOW_SECONDS = 60;

/**
 * The error code of the token endpoint's 429. RFC 6749 §5.2 has no code for a rate limit; `temporarily_unavailable`
 * (RFC 6749 §4.1.2.1: "unable to handle the request due to a temporary overloading") says what a client must do,
 * wait and retry, and every OAuth library knows it. RFC 8628's `slow_down` belongs to device-flow polling (§3.5).
 */
export const TOKEN_BUDGET_ERROR = "temporarily_unavailable";

/** Where the budget of a token request is spent: the Rate Limiting binding and the client's address, if known. */
export type TokenBudget = { limiter: RateLimit; clientAddress: string | undefined };

/**
 * The token endpoint's budget is spent (docs/oauth.md, Token budget): answered 429 with RFC 6749's error body,
 * `Retry-After` and the RateLimit fields, by the `/api/oauth` router.
 */
export class TokenBudgetSpent extends Error {
  readonly error = TOKEN_BUDGET_ERROR;
  readonly headers: [name: string, value: string][] = [
    ["Retry-After", String(WINDOW_SECONDS)],
    ...rateLimitHeaders({
      policy: "token_requests",
      quota: TOKEN_REQUESTS_PER_MINUTE,
      windowSeconds: WINDOW_SECONDS,
      remaining: 0,
      resetInSeconds: WINDOW_SECONDS,
    }),
  ];

  constructor(readonly description: string) {
    super(description);
    this.name = "TokenBudgetSpent";
  }
}

async function spend(budget: TokenBudget, key: string, description: string): Promise<void> {
  const { success } = await budget.limiter.limit({ key });
  if (!success) throw new TokenBudgetSpent(description);
}

/**
 * The budget of an authenticated client, spent before any work on its grant. A confidential client's is its own:
 * only a request with its secret spends it, so nobody who merely knows its client_id (which is public: it is in
 * every authorization URL) can lock it out. A public client (`none`) has no secret and every installation of a
 * native app may share its id, so its budget is per client and address.
 */
export function spendClientBudget(budget: TokenBudget, client: OAuthClient): Promise<void> {
  const publicClient = client.tokenEndpointAuthMethod === "none" && budget.clientAddress !== undefined;
  return spend(
    budget,
    publicClient ? `client:${client.id}@${budget.clientAddress}` : `client:${client.id}`,
    `Too many token requests: a client can make ${TOKEN_REQUESTS_PER_MINUTE} a minute${
      publicClient ? " from one address" : ""
    }. Retry after the seconds in Retry-After.`,
  );
}

/**
 * A request refused before it authenticated as a client (no client, a wrong secret, a missing parameter) spends
 * the budget of its address (`CF-Connecting-IP`, an IPv6 address as its /64), so that garbage is bounded too and no
 * client's budget pays for it. A request without that header did not come from the internet (a service binding, a
 * test) and is not counted, as at registration.
 */
export async function spendAddressBudget(budget: TokenBudget): Promise<void> {
  if (budget.clientAddress === undefined) return;
  await spend(
    budget,
    `address:${budget.clientAddress}`,
    `Too many failed token requests from this address: at most ${TOKEN_REQUESTS_PER_MINUTE} a minute. Retry after the seconds in Retry-After.`,
  );
}
