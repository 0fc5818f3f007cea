import type { Context } from "hono";
import { parseIPv6 } from "./public-address";

/**
 * The client's address as Cloudflare reports it in `CF-Connecting-IP` (set on every request from the internet,
 * replacing any value the client sent), or undefined without one: a test or a service binding, not a browser.
 *
 * An IPv6 client counts as a network, since one host usually holds a whole /64 and may pick any address in it
 * (RFC 7421): a /64 for budgets a client spends in its normal use (sign-in, the token endpoint), and a /48, the
 * usual allocation of one site (RFC 6177), for what anyone may create without a credential (sandbox businesses, OAuth
 * clients), where stepping through the 65,536 /64s of a /48 would otherwise pass any per-address limit.
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
