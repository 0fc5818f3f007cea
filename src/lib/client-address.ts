import type { Context } from "hono";
import { parseIPv6 } from "./public-address";

/**
 * The client's address as Cloudflare reports it in `CF-Connecting-IP` (set on every request from the internet,
 * replacing any value the client sent), or undefined without one: a test or a service binding, not a browser. An
 * IPv6 client usually holds a whole /64 and may pick any address in it (RFC 7421), so an IPv6 address counts as its
 * /64 network.
 */
export function clientAddressOf(c: Context): string | undefined {
  const reported = c.req.header("CF-Connecting-IP")?.trim();
  if (!reported) return undefined;
  const groups = parseIPv6(reported);
  return groups
    ? `${groups
        .slice(0, 4)
        .map((group) => group.toString(16))
        .join(":")}::/64`
    : reported;
}
