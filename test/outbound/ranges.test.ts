import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { webhookEndpoints } from "../../src/db/schema";
import { isPrivateAddress, outboundUrlProblem } from "../../src/lib/public-address";
import { createBusiness, db } from "../helpers/fixtures";
import { call, expectError } from "../helpers/http";

/*
 * docs/architecture.md, Outbound calls: the ranges added to the list after the first ones, each as a literal
 * URL host, refused by the URL rule and by registering a webhook endpoint through HTTP; and the public addresses just
 * outside each range, which the address check finds public (a host name that resolves to one is called; as a literal
 * host it is refused for being one: Workers fetch names only). The production policy throughout: these are not
 * loopback addresses, so the dev-only switch must not change a single answer.
 */

const PRODUCTION = { allowLoopback: false };
const DEVELOPMENT = { allowLoopback: true };
const PRIVATE = "must be a public address, not a private, loopback or reserved one";
const LITERAL = "must name its host, not an IP address: Cloudflare Workers cannot fetch an IP address directly";

// [range, refused URLs (first and last of the range, and one that says what it is), public neighbours just outside]
const RANGES: Array<[range: string, refused: string[], outside: string[]]> = [
  [
    "::/96, judged by its embedded IPv4 address",
    ["https://[::a00:1]/", "https://[::10.0.0.1]/", "https://[::a9fe:a9fe]/", "https://[::7f00:1]/"],
    ["https://[::808:808]/", "https://[::1:0:0]/"],
  ],
  [
    "::ffff:0:0:0/96, SIIT's IPv4-translated addresses, judged by their embedded IPv4 address",
    [
      "https://[::ffff:0:0:0]/",
      "https://[::ffff:0:7f00:1]/",
      "https://[::ffff:0:127.0.0.1]/",
      "https://[::ffff:0:a00:1]/",
      "https://[::ffff:0:169.254.169.254]/",
      "https://[::ffff:0:ffff:ffff]/",
    ],
    ["https://[::ffff:0:808:808]/", "https://[::fffe:ffff:ffff:ffff]/", "https://[::ffff:1:0:0]/"],
  ],
  ["::, the unspecified address", ["https://[::]/", "https://[0:0:0:0:0:0:0:0]/"], ["https://[::101:101]/"]],
  [
    "64:ff9b:1::/48, NAT64 local use",
    ["https://[64:ff9b:1::]/", "https://[64:ff9b:1::a00:1]/", "https://[64:ff9b:1:ffff:ffff:ffff:ffff:ffff]/"],
    ["https://[64:ff9b:0:ffff:ffff:ffff:ffff:ffff]/", "https://[64:ff9b:2::]/"],
  ],
  [
    "2001::/23, IETF protocol assignments (Teredo, benchmarking, ORCHIDv2)",
    [
      "https://[2001::]/",
      "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
      "https://[2001:2::1]/",
      "https://[2001:20::1]/",
      "https://[2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff]/",
    ],
    ["https://[2000:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/", "https://[2001:200::]/"],
  ],
  [
    "3fff::/20, documentation",
    ["https://[3fff::]/", "https://[3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff]/"],
    ["https://[3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/", "https://[3fff:1000::]/"],
  ],
  [
    "5f00::/16, segment routing SIDs",
    ["https://[5f00::]/", "https://[5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/"],
    ["https://[5eff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/", "https://[5f01::]/"],
  ],
  [
    "100:0:0:1::/64, dummy prefix",
    ["https://[100:0:0:1::]/", "https://[100:0:0:1:ffff:ffff:ffff:ffff]/"],
    ["https://[100:0:0:2::]/"],
  ],
  [
    "100::/64, discard-only",
    ["https://[100::]/", "https://[100::1]/", "https://[100::ffff:ffff:ffff:ffff]/"],
    ["https://[ff:ffff:ffff:ffff:ffff:ffff:ffff:ffff]/"],
  ],
  [
    "192.88.99.0/24, the retired 6to4 relay anycast",
    ["https://192.88.99.0/", "https://192.88.99.1/", "https://192.88.99.255/", "https://3227017985/"],
    ["https://192.88.98.255/", "https://192.88.100.0/"],
  ],
];

const register = (apiKey: string, url: string) =>
  call("/api/v1/webhooks", { key: apiKey, method: "POST", body: { url }, bindings: { ALLOW_LOOPBACK_URLS: "" } });

describe.each(RANGES)("%s", (_range, refused, outside) => {
  it.each(refused)("outboundUrlProblem refuses %s, in production and in development", (url) => {
    expect(outboundUrlProblem(url, PRODUCTION)).toBe(PRIVATE);
    expect(outboundUrlProblem(url, DEVELOPMENT)).toBe(PRIVATE);
  });

  it.each(outside)("isPrivateAddress finds %s public, just outside; as a literal host it is refused as one", (url) => {
    expect(isPrivateAddress(new URL(url).hostname)).toBe(false);
    expect(outboundUrlProblem(url, PRODUCTION)).toBe(LITERAL);
    expect(outboundUrlProblem(url, DEVELOPMENT)).toBe(LITERAL);
  });

  it("POST /api/v1/webhooks refuses every address of the range with 400 naming the url, and stores nothing", async () => {
    const { business, apiKey } = await createBusiness();
    for (const url of refused) await expectError(await register(apiKey, url), 400, `The field "url" ${PRIVATE}.`);
    expect(await db.select().from(webhookEndpoints).where(eq(webhookEndpoints.businessId, business.id))).toEqual([]);
  });

  it("POST /api/v1/webhooks refuses the public neighbours as literal hosts, saying why", async () => {
    const { apiKey } = await createBusiness();
    for (const url of outside) await expectError(await register(apiKey, url), 400, `The field "url" ${LITERAL}.`);
  });
});

// `[::1]` is the one address of ::/96 the dev-only switch opens (it is loopback); in production it stays refused.
it("::1 stays refused in production, written either way, by the URL rule and through HTTP", async () => {
  const { apiKey } = await createBusiness();
  for (const url of ["https://[::1]/", "https://[0:0:0:0:0:0:0:1]/", "https://[::0.0.0.1]/"]) {
    expect(outboundUrlProblem(url, PRODUCTION)).toBe(PRIVATE);
    await expectError(await register(apiKey, url), 400, `The field "url" ${PRIVATE}.`);
  }
});
