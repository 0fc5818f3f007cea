import type { Context } from "hono";
import { parseIPv6 } from "./public-address";

/**
 * The client's address from `CF-Connecting-IP` (Cloudflare sets it on every request from the internet), or undefined
 * without one: a test or a service binding. An IPv6 host may use any address of its /64 (RFC 7421), so budgets spent
 * in normal use (sign-in, tokens) count its /64, and what anyone may create without a credential (sandboxes, OAuth
 * clients) its /48, a site's usual allocation (RFC 6177), which stepping through /64s cannot pass.
 */
export function clientAddressOf(c: Context, ipv6Prefix: 48 | 64 = 64): string | undefined {
  const reported = c.req.header("CF-Connecting-IP")?.trim();
  if (!reported) return undefined;
  const groups = parseIPv6(reported);
  return groups
    ? `${groups
        .slice(0, ipv6Prefix / 16)
        .map((group) => group.toString(16))
        .join(":")}::/${ipv6Prefix}`
    : reported;
}

/** The client's network for limits on creating without a credential: an IPv6 address counts as its /48. */
export const creatorNetworkOf = (c: Context) => clientAddressOf(c, 48);
