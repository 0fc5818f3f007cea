import { rateLimitHeaders } from "../../lib/rate-limit-fields";
import type { OAuthClient } from "./clients";

/** `[[ratelimits]] TOKEN_RATE_LIMIT` in wrangler.toml: token requests per client (docs/oauth.md, Token budget). */
export const TOKEN_REQUESTS_PER_MINUTE = 60;
/** `[[ratelimits]] TOKEN_ADDRESS_RATE_LIMIT`: token requests per client address, whatever they are. */
export const TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE = 300;
const WINDOW_SECONDS = 60;

/**
 * The error code of the token endpoint's 429. RFC 6749 §5.2 has no code for a rate limit; `temporarily_unavailable`
 * (RFC 6749 §4.1.2.1: "unable to handle the request due to a temporary overloading") says what a client must do,
 * wait and retry, and every OAuth library knows it. RFC 8628's `slow_down` belongs to device-flow polling (§3.5).
 */
export const TOKEN_BUDGET_ERROR = "temporarily_unavailable";

/**
 * Where the budgets of a token request are spent: the Rate Limiting bindings (per client, and per address) and the
 * client's address, if known.
 */
export type TokenBudget = { limiter: RateLimit; addressLimiter: RateLimit; clientAddress: string | undefined };

/**
 * The token endpoint's budget is spent (docs/oauth.md, Token budget): answered 429 with RFC 6749's error body,
 * `Retry-After` and the RateLimit fields, by the `/api/oauth` router.
 */
export class TokenBudgetSpent extends Error {
  readonly error = TOKEN_BUDGET_ERROR;
  readonly headers: [name: string, value: string][];

  constructor(
    readonly description: string,
    policy = "token_requests",
    quota = TOKEN_REQUESTS_PER_MINUTE,
  ) {
    super(description);
    this.name = "TokenBudgetSpent";
    this.headers = [
      ["Retry-After", String(WINDOW_SECONDS)],
      ...rateLimitHeaders({
        policy,
        quota,
        windowSeconds: WINDOW_SECONDS,
        remaining: 0,
        resetInSeconds: WINDOW_SECONDS,
      }),
    ];
  }
}

async function spend(budget: TokenBudget, key: string, description: string): Promise<void> {
  const { success } = await budget.limiter.limit({ key });
  if (!success) throw new TokenBudgetSpent(description);
}

/**
 * The address's budget of every token request, spent first, before the body's client or grant is read: so that a
 * guess of a secret, a code or a refresh token costs no D1 round trip once an address has made 300 requests in the
 * minute, and guesses are slowed whatever they guess (docs/oauth.md, Token budget). High enough for a server that
 * refreshes for thousands of connections, beside its own client budget.
 */
export async function spendRequestBudget(budget: TokenBudget): Promise<void> {
  if (budget.clientAddress === undefined) return;
  const { success } = await budget.addressLimiter.limit({ key: budget.clientAddress });
  if (success) return;
  throw new TokenBudgetSpent(
    `Too many token requests from this address: at most ${TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE} a minute. Retry after the seconds in Retry-After.`,
    "token_requests_per_address",
    TOKEN_REQUESTS_PER_ADDRESS_PER_MINUTE,
  );
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
