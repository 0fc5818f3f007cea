import { invalid } from "./api-error";
import type { ConnectionSlots } from "./connection-slots";

/**
 * Outbound calls (webhook deliveries, action calls, Test buttons) go only to public addresses, so that no partner can
 * make the Worker reach a private network (docs/architecture.md, Outbound calls). Hostnames are checked after
 * `new URL` has normalised them (`2130706433` and `0x7f.1` become `127.0.0.1`, `[::ffff:127.0.0.1]` becomes
 * `[::ffff:7f00:1]`), and names are resolved before every attempt.
 */

type Range = readonly [network: number[], prefixBits: number];

// IPv4 ranges that are not the public internet: every range of IANA's IPv4 Special-Purpose Address Registry (RFC 6890)
// that is not globally reachable, and multicast. 192.0.0.0/24 is refused whole, its two anycast addresses too.
const PRIVATE_V4: Range[] = [
  [[0, 0, 0, 0], 8],
  [[10, 0, 0, 0], 8],
  [[100, 64, 0, 0], 10],
  [[127, 0, 0, 0], 8],
  [[169, 254, 0, 0], 16],
  [[172, 16, 0, 0], 12],
  [[192, 0, 0, 0], 24],
  [[192, 0, 2, 0], 24],
  [[192, 88, 99, 0], 24], // the retired 6to4 relay anycast (RFC 7526)
  [[192, 168, 0, 0], 16],
  [[198, 18, 0, 0], 15],
  [[198, 51, 100, 0], 24],
  [[203, 0, 113, 0], 24],
  [[224, 0, 0, 0], 4],
  [[240, 0, 0, 0], 4],
];

// IPv6 ranges, as 16-bit groups: every range of IANA's IPv6 Special-Purpose Address Registry (RFC 6890) that is not
// globally reachable or is not an address of a host (2001::/23, the IETF protocol assignments, is refused whole: it
// holds Teredo, benchmarking 2001:2::/48 and the ORCHIDv2 identifiers 2001:20::/28, none a web server), and
// multicast. `::` and `::1` are named although ::/96 below would refuse them by their embedded 0.0.0.0 and 0.0.0.1
// too: they are the unspecified and loopback addresses in their own right.
const PRIVATE_V6: Range[] = [
  [[0, 0, 0, 0, 0, 0, 0, 0], 128], // ::
  [[0, 0, 0, 0, 0, 0, 0, 1], 128], // ::1
  [[0xfc00, 0, 0, 0, 0, 0, 0, 0], 7],
  [[0xfe80, 0, 0, 0, 0, 0, 0, 0], 10],
  [[0xfec0, 0, 0, 0, 0, 0, 0, 0], 10],
  [[0xff00, 0, 0, 0, 0, 0, 0, 0], 8],
  [[0x2001, 0x0db8, 0, 0, 0, 0, 0, 0], 32],
  [[0x0064, 0xff9b, 0, 0, 0, 0, 0, 0], 96], // NAT64, well-known prefix
  [[0x0064, 0xff9b, 0x0001, 0, 0, 0, 0, 0], 48], // NAT64, local use (RFC 8215)
  [[0x2002, 0, 0, 0, 0, 0, 0, 0], 16], // 6to4
  [[0x2001, 0, 0, 0, 0, 0, 0, 0], 23], // IETF protocol assignments (RFC 2928): Teredo, benchmarking, ORCHIDv2…
  [[0x0100, 0, 0, 0, 0, 0, 0, 0], 64], // discard-only (RFC 6666)
  [[0x0100, 0, 0, 1, 0, 0, 0, 0], 64], // dummy prefix (RFC 9780)
  [[0x3fff, 0, 0, 0, 0, 0, 0, 0], 20], // documentation (RFC 9637)
  [[0x5f00, 0, 0, 0, 0, 0, 0, 0], 16], // segment routing SIDs (RFC 9602)
];

// The ranges that carry an IPv4 address in their last 32 bits and are judged by it (docs/architecture.md, Outbound
// calls; docs/decisions.md, Smaller rules): IPv4-mapped ::ffff:0:0/96, the deprecated IPv4-compatible ::/96, and
// SIIT's IPv4-translated ::ffff:0:0:0/96 (RFC 2765 §2.1; a stack that still translates it reaches the IPv4 address),
// so `[::a00:1]` is 10.0.0.1, `[::808:808]` is 8.8.8.8 and `[::ffff:0:7f00:1]` (`[::ffff:0:127.0.0.1]` before
// `new URL`) is 127.0.0.1.
const EMBEDDING_V4: Range[] = [
  [[0, 0, 0, 0, 0, 0xffff, 0, 0], 96],
  [[0, 0, 0, 0, 0, 0, 0, 0], 96],
  [[0, 0, 0, 0, 0xffff, 0, 0, 0], 96],
];

function inRange(parts: number[], [network, prefixBits]: Range, bitsPerPart: number): boolean {
  let remaining = prefixBits;
  for (let i = 0; remaining > 0; i++) {
    const bits = Math.min(bitsPerPart, remaining);
    const mask = ((1 << bits) - 1) << (bitsPerPart - bits);
    if (((parts[i] ?? 0) & mask) !== ((network[i] ?? 0) & mask)) return false;
    remaining -= bits;
  }
  return true;
}

export function parseIPv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => /^\d{1,3}$/.test(part) && Number(part) <= 255)) return undefined;
  return parts.map(Number);
}

/** Eight 16-bit groups, from any textual form (`::` shorthand, an embedded dotted IPv4 tail); brackets allowed. */
export function parseIPv6(text: string): number[] | undefined {
  let address = text.replace(/^\[|\]$/g, "");
  if (!address.includes(":")) return undefined;
  const dotted = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (dotted) {
    const v4 = parseIPv4(dotted[2] ?? "");
    if (!v4) return undefined;
    address = `${dotted[1]}${((v4[0] ?? 0) * 256 + (v4[1] ?? 0)).toString(16)}:${((v4[2] ?? 0) * 256 + (v4[3] ?? 0)).toString(16)}`;
  }
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const groups = (half: string | undefined) => (half ? half.split(":") : []);
  const head = groups(halves[0]);
  const tail = groups(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!all.every((group) => /^[0-9a-f]{1,4}$/i.test(group))) return undefined;
  return all.map((group) => Number.parseInt(group, 16));
}

/** True for any address outside the public internet; true as well for text that is not an address at all. */
export function isPrivateAddress(address: string): boolean {
  const v4 = parseIPv4(address);
  if (v4) return PRIVATE_V4.some((range) => inRange(v4, range, 8));
  const v6 = parseIPv6(address);
  if (!v6) return true;
  if (PRIVATE_V6.some((range) => inRange(v6, range, 16))) return true;
  if (EMBEDDING_V4.some((range) => inRange(v6, range, 16))) {
    const [high = 0, low = 0] = v6.slice(6);
    return isPrivateAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
  }
  return false;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * What the address rules depend on (built by `outboundPolicy` in lib/outbound.ts): the dev-only loopback switch, and
 * for the lookups of one invocation, its connection slots and the addresses of each host looked up once.
 */
export type OutboundPolicy = {
  allowLoopback: boolean;
  slots?: ConnectionSlots;
  lookups?: Map<string, Promise<string[]>>;
};

const isLiteralAddress = (hostname: string) => parseIPv4(hostname) !== undefined || hostname.startsWith("[");

/** The host as DNS sees it: lower case, without the one trailing dot of a fully qualified name (`localhost.`). */
const hostOf = (url: URL) => url.hostname.toLowerCase().replace(/\.$/, "");

/**
 * Why a URL may not be called, or undefined when it may: https only, a dotted host name, no credentials in it. With
 * the dev-only policy, http and https to localhost, 127.0.0.1 and [::1] are allowed too.
 */
export function outboundUrlProblem(raw: string, policy: OutboundPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "must be an absolute URL";
  }
  const host = hostOf(url);
  if (url.username || url.password) return "must not carry a user name or password";
  if (policy.allowLoopback && LOOPBACK_HOSTS.has(host)) {
    return url.protocol === "https:" || url.protocol === "http:" ? undefined : "must use https";
  }
  if (url.protocol !== "https:") return "must use https";
  if (host === "" || host.split(".").includes("")) return "must have a valid host name";
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local")) {
    return "must be a public address, not a local name";
  }
  if (isLiteralAddress(host)) {
    // A Worker cannot fetch an IP address, only a host name (docs/architecture.md, Outbound calls): a literal one
    // would fail every attempt in production, so it is refused at registration, the private ones saying so.
    return isPrivateAddress(host)
      ? "must be a public address, not a private, loopback or reserved one"
      : "must name its host, not an IP address: Cloudflare Workers cannot fetch an IP address directly";
  }
  if (!host.includes(".")) return "must be a public address with a domain name";
  return undefined;
}

/**
 * Registration of a webhook endpoint or an action, whose `url` is a public https address (docs/guides/webhooks.md,
 * Subscribing; docs/guides/connected-actions.md, Registering an action): the 400 naming the
 * field when the URL may not be called under the Worker's policy.
 */
export function assertRegistrableUrl(policy: OutboundPolicy, url: string): void {
  const problem = outboundUrlProblem(url, policy);
  if (problem) throw invalid(`The field "url" ${problem}.`, "url");
}

type DohAnswer = { Status?: number; Answer?: Array<{ type: number; data: string }> };

/**
 * Why a URL may not be called now, checked before every attempt: the URL rules above again (the policy may differ
 * from the one at registration), then the name resolved through DNS-over-HTTPS (JSON API, A and AAAA): it must
 * resolve, and to public addresses only. The dev-only loopback names need no lookup.
 */
export async function unreachableReason(
  rawUrl: string,
  resolverUrl: string,
  policy: OutboundPolicy,
): Promise<string | undefined> {
  const problem = outboundUrlProblem(rawUrl, policy);
  if (problem) return `address cannot be fetched: the url ${problem}`;
  const host = hostOf(new URL(rawUrl));
  if (policy.allowLoopback && LOOPBACK_HOSTS.has(host)) return undefined;
  let addresses = policy.lookups?.get(host);
  if (!addresses) {
    addresses = lookUp(resolverUrl, host, policy.slots);
    policy.lookups?.set(host, addresses);
  }
  return judged(await addresses);
}

/**
 * A host's A and AAAA addresses through DNS-over-HTTPS (JSON API), each query in a connection slot until its answer's
 * headers when there are slots, its 3 s timeout starting once it holds one.
 */
async function lookUp(resolverUrl: string, host: string, slots: ConnectionSlots | undefined): Promise<string[]> {
  const query = async (type: string) => {
    const url = new URL(resolverUrl);
    url.searchParams.set("name", host);
    url.searchParams.set("type", type);
    const send = () => fetch(url, { headers: { Accept: "application/dns-json" }, signal: AbortSignal.timeout(3000) });
    const response = await (slots ? slots.run(send) : send());
    if (!response.ok) throw new Error(`the resolver answered ${response.status}`);
    const body = (await response.json()) as DohAnswer;
    return (body.Answer ?? []).filter((answer) => answer.type === 1 || answer.type === 28).map((a) => a.data);
  };
  const lookups = await Promise.all(["A", "AAAA"].map(query));
  return lookups.flat();
}

/** The verdict on a host's addresses: it must resolve, and to public addresses only. */
function judged(addresses: string[]): string | undefined {
  if (addresses.length === 0) return "address cannot be fetched: the host name does not resolve";
  if (addresses.some(isPrivateAddress)) return "address cannot be fetched: the host resolves to a private address";
  return undefined;
}
