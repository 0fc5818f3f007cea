import { env } from "cloudflare:workers";
import { afterAll, describe, expect, it } from "vitest";
import { ConnectionSlots } from "../../src/lib/connection-slots";
import { outboundPolicy } from "../../src/lib/outbound";
import {
  isPrivateAddress,
  outboundUrlProblem,
  parseIPv4,
  parseIPv6,
  unreachableReason,
} from "../../src/lib/public-address";
import { receiverBox } from "../helpers/receiver";

const PRODUCTION = { allowLoopback: false };
const DEVELOPMENT = { allowLoopback: true };

describe("isPrivateAddress: IPv4 ranges of docs/architecture.md (Outbound calls), at their edges", () => {
  // [range, first address inside, last address inside, neighbours just outside (public)]
  const ranges: Array<[range: string, first: string, last: string, outside: string[]]> = [
    ["0.0.0.0/8", "0.0.0.0", "0.255.255.255", ["1.0.0.0"]],
    ["10.0.0.0/8", "10.0.0.0", "10.255.255.255", ["9.255.255.255", "11.0.0.0"]],
    ["100.64.0.0/10", "100.64.0.0", "100.127.255.255", ["100.63.255.255", "100.128.0.0"]],
    ["127.0.0.0/8", "127.0.0.0", "127.255.255.255", ["126.255.255.255", "128.0.0.0"]],
    ["169.254.0.0/16", "169.254.0.0", "169.254.255.255", ["169.253.255.255", "169.255.0.0"]],
    ["172.16.0.0/12", "172.16.0.0", "172.31.255.255", ["172.15.255.255", "172.32.0.0"]],
    ["192.0.0.0/24", "192.0.0.0", "192.0.0.255", ["191.255.255.255", "192.0.1.0"]],
    ["192.0.2.0/24", "192.0.2.0", "192.0.2.255", ["192.0.1.255", "192.0.3.0"]],
    ["192.88.99.0/24", "192.88.99.0", "192.88.99.255", ["192.88.98.255", "192.88.100.0"]],
    ["192.168.0.0/16", "192.168.0.0", "192.168.255.255", ["192.167.255.255", "192.169.0.0"]],
    ["198.18.0.0/15", "198.18.0.0", "198.19.255.255", ["198.17.255.255", "198.20.0.0"]],
    ["198.51.100.0/24", "198.51.100.0", "198.51.100.255", ["198.51.99.255", "198.51.101.0"]],
    ["203.0.113.0/24", "203.0.113.0", "203.0.113.255", ["203.0.112.255", "203.0.114.0"]],
    ["224.0.0.0/4", "224.0.0.0", "239.255.255.255", ["223.255.255.255"]],
    ["240.0.0.0/4", "240.0.0.0", "255.255.255.255", []],
  ];

  describe.each(ranges)("%s", (_range, first, last, outside) => {
    it(`${first} (first) and ${last} (last) are private`, () => {
      expect(isPrivateAddress(first)).toBe(true);
      expect(isPrivateAddress(last)).toBe(true);
    });
    if (outside.length > 0) {
      it(`${outside.join(" and ")} just outside ${outside.length > 1 ? "are" : "is"} public`, () => {
        for (const address of outside) expect(isPrivateAddress(address)).toBe(false);
      });
    }
  });

  it.each(["10.1.2.3", "127.0.0.1", "169.254.169.254", "172.20.10.1", "192.168.1.1", "100.100.100.200", "198.18.0.1"])(
    "%s, inside a range, is private",
    (address) => {
      expect(isPrivateAddress(address)).toBe(true);
    },
  );

  it.each(["8.8.8.8", "1.1.1.1", "93.184.216.34", "104.16.0.1", "223.255.255.254"])("%s is public", (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });
});

describe("isPrivateAddress: IPv6 ranges of docs/architecture.md (Outbound calls)", () => {
  it.each([
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback, written out"],
    ["fc00::", "fc00::/7, first"],
    ["fd12:3456:789a::1", "fc00::/7, a ULA"],
    ["fdff::1", "fc00::/7, the fd half"],
    ["fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "fc00::/7, last"],
    ["fe80::1", "fe80::/10, link-local"],
    ["FE80::1", "fe80::/10 in capitals"],
    ["febf::1", "fe80::/10, last block"],
    ["fec0::1", "fec0::/10, site-local"],
    ["feff:ffff::1", "fec0::/10, last block"],
    ["ff02::1", "ff00::/8, multicast"],
    ["ff00::", "ff00::/8, first"],
    ["2001:db8::1", "2001:db8::/32, documentation"],
    ["2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::/32, last"],
    ["64:ff9b::808:808", "64:ff9b::/96, NAT64 of 8.8.8.8"],
    ["64:ff9b::8.8.8.8", "64:ff9b::/96, dotted tail"],
    ["2002::1", "2002::/16, 6to4"],
    ["2002:c000:0204::1", "2002::/16, 6to4 of a public address"],
    ["64:ff9b:1::", "64:ff9b:1::/48, NAT64 local use, first"],
    ["64:ff9b:1::a00:1", "64:ff9b:1::/48, NAT64 local use of 10.0.0.1"],
    ["64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "64:ff9b:1::/48, last"],
    ["2001::", "2001::/23, IETF protocol assignments, first (Teredo)"],
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::/23, a Teredo address of a public client"],
    ["2001:2::1", "2001::/23, benchmarking 2001:2::/48"],
    ["2001:20::1", "2001::/23, ORCHIDv2 2001:20::/28"],
    ["2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", "2001::/23, last"],
    ["100:0:0:1::", "100:0:0:1::/64, dummy prefix, first"],
    ["100:0:0:1:ffff:ffff:ffff:ffff", "100:0:0:1::/64, last"],
    ["3fff::", "3fff::/20, documentation, first"],
    ["3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", "3fff::/20, last"],
    ["5f00::", "5f00::/16, segment routing SIDs, first"],
    ["5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "5f00::/16, last"],
    ["100::", "100::/64, discard-only, first"],
    ["100::ffff:ffff:ffff:ffff", "100::/64, last"],
    ["[::1]", "loopback in brackets, as URL.hostname writes it"],
  ])("%s is private (%s)", (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each([
    ["2606:4700:4700::1111", "Cloudflare DNS"],
    ["2001:4860:4860::8888", "Google DNS"],
    ["[2606:4700:4700::1111]", "in brackets"],
    ["2001:db9::1", "just after 2001:db8::/32"],
    ["2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", "just before 2001:db8::/32"],
    ["2003::1", "just after 2002::/16"],
    ["2001:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "just before 2002::/16"],
    ["64:ff9b:0:ffff:ffff:ffff:ffff:ffff", "just before 64:ff9b:1::/48, outside 64:ff9b::/96"],
    ["64:ff9b:2::", "just after 64:ff9b:1::/48"],
    ["2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "just before 2001::/23"],
    ["2001:200::", "just after 2001::/23"],
    ["ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "just before 100::/64"],
    ["100:0:0:2::", "just after 100:0:0:1::/64"],
    ["3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "just before 3fff::/20"],
    ["3fff:1000::", "just after 3fff::/20"],
    ["5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "just before 5f00::/16"],
    ["5f01::", "just after 5f00::/16"],
    ["::1:0:0", "just after ::/96"],
    ["::fffe:ffff:ffff:ffff", "just before ::ffff:0:0:0/96"],
    ["::ffff:1:0:0", "just after ::ffff:0:0:0/96"],
  ])("%s is public (%s)", (address) => {
    expect(isPrivateAddress(address)).toBe(false);
  });

  it.each([
    ["::ffff:127.0.0.1", true],
    ["::ffff:7f00:1", true],
    ["[::ffff:7f00:1]", true],
    ["0:0:0:0:0:ffff:7f00:1", true],
    ["::ffff:10.0.0.1", true],
    ["::ffff:a00:1", true],
    ["::ffff:169.254.169.254", true],
    ["::ffff:192.168.1.1", true],
    ["::ffff:8.8.8.8", false],
    ["::ffff:808:808", false],
    ["::ffff:1.1.1.1", false],
  ])("IPv4-mapped %s is judged by its embedded IPv4 address (private: %s)", (address, isPrivate) => {
    expect(isPrivateAddress(address)).toBe(isPrivate);
  });

  it.each([
    ["::a00:1", true],
    ["[::a00:1]", true],
    ["::10.0.0.1", true],
    ["::7f00:1", true],
    ["::a9fe:a9fe", true],
    ["::c0a8:101", true],
    ["::6440:1", true],
    ["::2", true],
    ["::ffff", true],
    ["::808:808", false],
    ["::8.8.8.8", false],
    ["[::808:808]", false],
    ["::101:101", false],
    ["::dfff:ffff", false],
  ])("IPv4-compatible (::/96) %s is judged by its embedded IPv4 address (private: %s)", (address, isPrivate) => {
    expect(isPrivateAddress(address)).toBe(isPrivate);
  });

  it.each([
    ["::ffff:0:7f00:1", true],
    ["::ffff:0:127.0.0.1", true],
    ["[::ffff:0:7f00:1]", true],
    ["0:0:0:0:ffff:0:7f00:1", true],
    ["::ffff:0:0:0", true],
    ["::ffff:0:a00:1", true],
    ["::ffff:0:169.254.169.254", true],
    ["::ffff:0:c0a8:101", true],
    ["::ffff:0:ffff:ffff", true],
    ["::ffff:0:808:808", false],
    ["::ffff:0:8.8.8.8", false],
    ["::ffff:0:101:101", false],
  ])(
    "IPv4-translated (::ffff:0:0:0/96) %s is judged by its embedded IPv4 address (private: %s)",
    (address, isPrivate) => {
      expect(isPrivateAddress(address)).toBe(isPrivate);
    },
  );

  it.each([
    "",
    "not an address",
    "localhost",
    "example.com",
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "1.2.3.-1",
    "01.02.03.004x",
    "::g",
    "1::2::3",
    "1:2:3:4:5:6:7:8:9",
    "::ffff:999.1.1.1",
    "[",
  ])("treats %j, which is not an address, as private", (text) => {
    expect(isPrivateAddress(text)).toBe(true);
  });
});

describe("parseIPv4", () => {
  it("parses a dotted quad", () => {
    expect(parseIPv4("192.168.1.20")).toEqual([192, 168, 1, 20]);
    expect(parseIPv4("0.0.0.0")).toEqual([0, 0, 0, 0]);
    expect(parseIPv4("255.255.255.255")).toEqual([255, 255, 255, 255]);
  });

  it.each(["1.2.3", "1.2.3.4.5", "256.0.0.1", "1.2.3.1234", "a.b.c.d", "1.2.3.", "", "0x7f.0.0.1", " 1.2.3.4"])(
    "refuses %j",
    (text) => {
      expect(parseIPv4(text)).toBeUndefined();
    },
  );
});

describe("parseIPv6", () => {
  const DOC = [0x2001, 0x0db8, 0, 0, 0, 0, 0, 1];

  it.each([
    ["2001:db8::1", DOC],
    ["2001:0db8:0000:0000:0000:0000:0000:0001", DOC],
    ["2001:db8:0:0:0:0:0:1", DOC],
    ["[2001:db8::1]", DOC],
    ["2001:DB8::1", DOC],
    ["::", [0, 0, 0, 0, 0, 0, 0, 0]],
    ["[::]", [0, 0, 0, 0, 0, 0, 0, 0]],
    ["::1", [0, 0, 0, 0, 0, 0, 0, 1]],
    ["[::1]", [0, 0, 0, 0, 0, 0, 0, 1]],
    ["fe80::", [0xfe80, 0, 0, 0, 0, 0, 0, 0]],
    ["1:2:3:4:5:6:7:8", [1, 2, 3, 4, 5, 6, 7, 8]],
    ["1:2:3:4:5:6:7::", [1, 2, 3, 4, 5, 6, 7, 0]],
    ["::2:3:4:5:6:7:8", [0, 2, 3, 4, 5, 6, 7, 8]],
    ["1:2::7:8", [1, 2, 0, 0, 0, 0, 7, 8]],
    ["::ffff:127.0.0.1", [0, 0, 0, 0, 0, 0xffff, 0x7f00, 0x0001]],
    ["::ffff:7f00:1", [0, 0, 0, 0, 0, 0xffff, 0x7f00, 0x0001]],
    ["[::ffff:7f00:1]", [0, 0, 0, 0, 0, 0xffff, 0x7f00, 0x0001]],
    ["64:ff9b::8.8.8.8", [0x64, 0xff9b, 0, 0, 0, 0, 0x0808, 0x0808]],
    ["1:2:3:4:5:6:1.2.3.4", [1, 2, 3, 4, 5, 6, 0x0102, 0x0304]],
    ["ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", Array(8).fill(0xffff)],
  ])("parses %s", (text, groups) => {
    expect(parseIPv6(text)).toEqual(groups);
  });

  it.each([
    ["an IPv4 address", "1.2.3.4"],
    ["a name", "example.com"],
    ["an empty string", ""],
    ["nine groups", "1:2:3:4:5:6:7:8:9"],
    ["seven groups without ::", "1:2:3:4:5:6:7"],
    ["eight groups and ::", "1:2:3:4:5:6:7::8"],
    ["two ::", "1::2::3"],
    ["a five-digit group", "12345::1"],
    ["a non-hex digit", "g::1"],
    ["a leading single colon", ":1:2:3:4:5:6:7"],
    ["a trailing single colon", "1:2:3:4:5:6:7:"],
    ["a bad dotted tail", "::ffff:256.0.0.1"],
    ["a short dotted tail", "::ffff:1.2.3"],
    ["a zone id", "fe80::1%eth0"],
  ])("refuses %s (%j)", (_case, text) => {
    expect(parseIPv6(text)).toBeUndefined();
  });
});

describe("outboundUrlProblem", () => {
  it.each([
    "https://partner.example/hooks",
    "https://partner.example:8443/hooks?x=1#f",
    "https://sub.domain.partner.example/",
  ])("accepts the public https URL %s", (url) => {
    expect(outboundUrlProblem(url, PRODUCTION)).toBeUndefined();
    expect(outboundUrlProblem(url, DEVELOPMENT)).toBeUndefined();
  });

  it.each(["https://93.184.216.34/", "https://[2606:4700:4700::1111]/", "https://1.1.1.1:8443/hooks"])(
    "refuses the public IP literal %s in production and in development: Workers fetch host names only",
    (url) => {
      const problem = "must name its host, not an IP address: Cloudflare Workers cannot fetch an IP address directly";
      expect(outboundUrlProblem(url, PRODUCTION)).toBe(problem);
      expect(outboundUrlProblem(url, DEVELOPMENT)).toBe(problem);
    },
  );

  it.each([
    ["http://localhost/x", "must use https"],
    ["https://localhost/x", "must be a public address, not a local name"],
    ["https://LOCALHOST/x", "must be a public address, not a local name"],
    ["https://localhost./x", "must be a public address, not a local name"],
    ["https://127.0.0.1/x", "must be a public address, not a private, loopback or reserved one"],
    ["http://127.0.0.1:9999/x", "must use https"],
    ["https://[::1]/x", "must be a public address, not a private, loopback or reserved one"],
    ["https://2130706433/", "must be a public address, not a private, loopback or reserved one"],
    ["https://0x7f.1/", "must be a public address, not a private, loopback or reserved one"],
    ["https://0177.0.0.1/", "must be a public address, not a private, loopback or reserved one"],
    ["https://127.1/", "must be a public address, not a private, loopback or reserved one"],
  ])("in production refuses loopback %s", (url, problem) => {
    expect(outboundUrlProblem(url, PRODUCTION)).toBe(problem);
  });

  it.each([
    "http://localhost/x",
    "https://localhost/x",
    "http://localhost:8787/x",
    "https://127.0.0.1/x",
    "http://127.0.0.1:9999/x",
    "http://[::1]:9999/x",
    "https://2130706433/",
    "https://0x7f.1/",
  ])("with the dev-only switch accepts loopback %s", (url) => {
    expect(outboundUrlProblem(url, DEVELOPMENT)).toBeUndefined();
  });

  it.each([
    ["ftp://127.0.0.1/x", "must use https"],
    ["ws://localhost/x", "must use https"],
    ["http://user:pw@localhost/x", "must not carry a user name or password"],
    ["https://127.0.0.2/", "must be a public address, not a private, loopback or reserved one"],
    ["https://app.localhost/", "must be a public address, not a local name"],
    ["http://partner.example/x", "must use https"],
  ])("with the dev-only switch still refuses %s", (url, problem) => {
    expect(outboundUrlProblem(url, DEVELOPMENT)).toBe(problem);
  });

  it.each([
    ["not a url", "must be an absolute URL"],
    ["/relative", "must be an absolute URL"],
    ["https://", "must be an absolute URL"],
    ["https://256.0.0.1/", "must be an absolute URL"],
    ["ftp://partner.example/", "must use https"],
    ["file:///etc/passwd", "must use https"],
    ["javascript:alert(1)", "must use https"],
    ["data:text/plain,hi", "must use https"],
    ["https://u:p@partner.example/", "must not carry a user name or password"],
    ["https://u@partner.example/", "must not carry a user name or password"],
    ["https://:p@partner.example/", "must not carry a user name or password"],
    ["https://intranet/", "must be a public address with a domain name"],
    ["https://printer.local/", "must be a public address, not a local name"],
    ["https://a.b.localhost/", "must be a public address, not a local name"],
    ["https://app.localhost./", "must be a public address, not a local name"],
    ["https://printer.local./", "must be a public address, not a local name"],
    ["https://intranet./", "must be a public address with a domain name"],
    ["https://a..b/", "must have a valid host name"],
    ["https://./", "must have a valid host name"],
    ["https://10.0.0.1/", "must be a public address, not a private, loopback or reserved one"],
    ["https://10.0.0.1./", "must be a public address, not a private, loopback or reserved one"],
    ["https://167772161/", "must be a public address, not a private, loopback or reserved one"],
    ["https://0xa.1/", "must be a public address, not a private, loopback or reserved one"],
    ["https://%31%30.0.0.1/", "must be a public address, not a private, loopback or reserved one"],
    ["https://0/", "must be a public address, not a private, loopback or reserved one"],
    ["https://169.254.169.254/", "must be a public address, not a private, loopback or reserved one"],
    ["https://[::ffff:127.0.0.1]/", "must be a public address, not a private, loopback or reserved one"],
    ["https://[0:0:0:0:0:ffff:a00:1]/", "must be a public address, not a private, loopback or reserved one"],
    ["https://[fd00::1]/", "must be a public address, not a private, loopback or reserved one"],
    ["https://[fe80::1]/", "must be a public address, not a private, loopback or reserved one"],
    ["https://[64:ff9b::a00:1]/", "must be a public address, not a private, loopback or reserved one"],
  ])("refuses %s in production and in development", (url, problem) => {
    expect(outboundUrlProblem(url, PRODUCTION)).toBe(problem);
    expect(outboundUrlProblem(url, DEVELOPMENT)).toBe(problem);
  });
});

describe("outboundPolicy", () => {
  it.each([
    ["true", true],
    ["false", false],
    ["TRUE", false],
    ["1", false],
    ["", false],
  ])('ALLOW_LOOPBACK_URLS=%j → allowLoopback %s (only exactly "true" opens loopback)', (value, allowLoopback) => {
    expect(outboundPolicy({ ...env, ALLOW_LOOPBACK_URLS: value }).allowLoopback).toBe(allowLoopback);
  });

  it("is open in the test environment", () => {
    expect(outboundPolicy(env)).toEqual({
      ...DEVELOPMENT,
      slots: expect.any(ConnectionSlots),
      lookups: new Map(),
      resolverUrl: env.DOH_RESOLVER_URL,
      serviceName: "Secretary",
      baseUrl: "http://localhost:8787",
    });
  });

  it("looks each host up once per unit of work, whatever its number of deliveries", async () => {
    const policy = outboundPolicy(env);
    const url = `https://${crypto.randomUUID()}.public.test/hooks`;
    const reasons = await Promise.all(
      Array.from({ length: 5 }, () => unreachableReason(url, env.DOH_RESOLVER_URL, policy)),
    );
    expect(reasons).toEqual(Array(5).fill(undefined));
    expect([...policy.lookups.keys()]).toEqual([new URL(url).hostname]);
  });
});

describe("unreachableReason: the check before every attempt, with DNS-over-HTTPS", () => {
  const resolver = env.DOH_RESOLVER_URL;
  /** A resolver that must not be asked: it answers 500 (the lookup would throw) and records every question. */
  const unasked = receiverBox("unasked-resolver");
  const noResolver = unasked.url("/status/500/");
  afterAll(async () => {
    expect(await unasked.recorded()).toEqual([]);
  });

  it("refuses a name that resolves to a private IPv4 address (A)", async () => {
    const reason = await unreachableReason("https://hooks.private.test/x", resolver, PRODUCTION);
    expect(reason).toContain("address cannot be fetched");
    expect(reason).toBe("address cannot be fetched: the host resolves to a private address");
  });

  it("refuses a name whose AAAA record is an IPv4-mapped loopback address", async () => {
    expect(await unreachableReason("https://hooks.mapped.test/x", resolver, PRODUCTION)).toBe(
      "address cannot be fetched: the host resolves to a private address",
    );
  });

  it("refuses such names with the dev-only switch too: it opens loopback names, not what a name resolves to", async () => {
    expect(await unreachableReason("https://hooks.private.test/x", resolver, DEVELOPMENT)).toContain(
      "address cannot be fetched",
    );
    expect(await unreachableReason("https://hooks.mapped.test/x", resolver, DEVELOPMENT)).toContain(
      "address cannot be fetched",
    );
  });

  it("lets a name that resolves to a public address through", async () => {
    expect(await unreachableReason("https://hooks.public.test/x", resolver, PRODUCTION)).toBeUndefined();
  });

  it("refuses a name that does not resolve", async () => {
    const reason = await unreachableReason("https://hooks.nowhere.test/x", resolver, PRODUCTION);
    expect(reason).toBe("address cannot be fetched: the host name does not resolve");
    expect(reason).toContain("does not resolve");
  });

  it("checks the URL rules first, naming the URL's problem", async () => {
    expect(await unreachableReason("http://hooks.public.test/x", resolver, PRODUCTION)).toBe(
      "address cannot be fetched: the url must use https",
    );
    expect(await unreachableReason("https://10.0.0.1/x", noResolver, PRODUCTION)).toBe(
      "address cannot be fetched: the url must be a public address, not a private, loopback or reserved one",
    );
    expect(await unreachableReason("http://localhost/x", noResolver, PRODUCTION)).toBe(
      "address cannot be fetched: the url must use https",
    );
  });

  it("refuses a literal public address before any lookup: a stored one fails its attempt saying why", async () => {
    const refused =
      "address cannot be fetched: the url must name its host, not an IP address: Cloudflare Workers cannot fetch an IP address directly";
    expect(await unreachableReason("https://93.184.216.34/x", noResolver, PRODUCTION)).toBe(refused);
    expect(await unreachableReason("https://[2606:4700:4700::1111]/x", noResolver, PRODUCTION)).toBe(refused);
  });

  it("needs no lookup for the allowed loopback names with the dev-only switch", async () => {
    expect(await unreachableReason("http://localhost:9999/x", noResolver, DEVELOPMENT)).toBeUndefined();
    expect(await unreachableReason("http://127.0.0.1:9999/x", noResolver, DEVELOPMENT)).toBeUndefined();
    expect(await unreachableReason(receiverBox().url("/hooks"), noResolver, DEVELOPMENT)).toBeUndefined();
  });

  it("throws when the resolver cannot answer (the caller records the attempt as failed)", async () => {
    const failing = receiverBox("failing-resolver");
    await expect(
      unreachableReason("https://hooks.public.test/x", failing.url("/status/500/"), PRODUCTION),
    ).rejects.toThrow("the resolver answered 500");
    expect((await failing.recorded()).length).toBeGreaterThan(0);
  });
});
