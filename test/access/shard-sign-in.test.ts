import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { apiKeys, ownerSessions } from "../../src/db/schema";
import { SHARD_NAMES, type ShardName } from "../../src/db/shards";
import { signInOwner } from "../../src/domain/access/owner-sign-in";
import { sha256Hex } from "../../src/lib/secrets";
import { countingShards } from "../helpers/counting-d1";
import { page, post, signedIn, submit } from "../helpers/dashboard";
import { shardDependencies } from "../helpers/dependencies";
import { shardDb } from "../helpers/fixtures";
import { BASE, call, dispatch, json } from "../helpers/http";
import { browse, CookieJar, createOwnerBusiness, csrfTokenOf } from "../helpers/oauth";

// Owner sign-in and the dashboard on regional shards (docs/scaling.md, Sign-in; How a request finds its shard): the
// email names the business's shard through the directory, and the session's cookie names it from then on.

const SESSION_COOKIE = "__Host-owner_session";

/** The databases a row of a business in `shard` must never be in: every other one, the global (legacy) included. */
const otherShards = (shard: ShardName) => SHARD_NAMES.filter((other) => other !== shard);

const sessionRows = (shard: ShardName, token: string) =>
  shardDb(shard).$count(ownerSessions, eq(ownerSessions.tokenHash, sha256Hex(token)));

describe.each(["eu1", "us1"] as const)("an owner of a business in %s signs in on its shard", async (shard) => {
  const shop = await createOwnerBusiness({ shard });
  const jar = await signedIn(shop);
  const token = jar.cookies.get(SESSION_COOKIE) ?? "";

  it("signs in over HTTP and sees the dashboard of their own business", async () => {
    const overview = await page(jar, "/dashboard");
    await expect(overview).toHaveStatus(200);
    expect(overview.html).toContain(shop.business.name);
  });

  it("holds a session cookie whose token names the shard, and the session is stored in that shard only", async () => {
    expect(token).toMatch(new RegExp(`^${shard}_[A-Za-z0-9_-]{43}$`));
    expect(await sessionRows(shard, token)).toBe(1);
    for (const other of otherShards(shard)) expect(await sessionRows(other, token)).toBe(0);
  });

  it("creates a key in the dashboard that names the shard, is stored there and works on the partner API", async () => {
    const created = await submit(jar, "/dashboard/keys", "/dashboard/keys", { label: `Key in ${shard}` });
    await expect(created).toHaveStatus(201);
    const key = /data-testid="new-key">([^<]+)</.exec(await created.text())?.[1]?.trim() ?? "";
    expect(key).toMatch(new RegExp(`^sk_live_${shard}_[A-Za-z0-9_-]{43}$`));
    const me = await call("/api/v1/me", { key });
    await expect(me).toHaveStatus(200);
    expect((await json(me)).id).toBe(shop.business.id);
    const stored = (db: ShardName) => shardDb(db).$count(apiKeys, eq(apiKeys.keyHash, sha256Hex(key)));
    expect(await stored(shard)).toBe(1);
    for (const other of otherShards(shard)) expect(await stored(other)).toBe(0);
  });

  it("treats a cookie whose token names another shard, or none of ours, as no session", async () => {
    const random = token.slice(shard.length + 1);
    for (const forged of [`${otherShards(shard)[1]}_${random}`, `xx9_${random}`, random, `${token}x`]) {
      const other = new CookieJar();
      other.cookies.set(SESSION_COOKIE, forged);
      const response = await browse(other, "/dashboard");
      await expect(response, forged).toHaveStatus(303);
      expect(response.headers.get("Location")).toBe("/dashboard/sign-in");
    }
  });

  it("signs out in that shard: the session is deleted there and its cookie opens nothing", async () => {
    const leaving = await signedIn(shop);
    const leavingToken = leaving.cookies.get(SESSION_COOKIE) ?? "";
    expect(await sessionRows(shard, leavingToken)).toBe(1);
    const signedOut = await submit(leaving, "/dashboard", "/dashboard/sign-out");
    await expect(signedOut).toHaveStatus(303);
    expect(await sessionRows(shard, leavingToken)).toBe(0);
    const stale = new CookieJar();
    stale.cookies.set(SESSION_COOKIE, leavingToken);
    await expect(await browse(stale, "/dashboard")).toHaveStatus(303);
    // The other session of the same owner is untouched.
    await expect(await page(jar, "/dashboard")).toHaveStatus(200);
  });
});

describe("a legacy business (created before sharding) keeps its sessions and keys", async () => {
  const shop = await createOwnerBusiness({ shard: "legacy" });

  it("signs in with a session token that names no shard, stored in the legacy database", async () => {
    const jar = await signedIn(shop);
    const token = jar.cookies.get(SESSION_COOKIE) ?? "";
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(await sessionRows("legacy", token)).toBe(1);
    expect((await page(jar, "/dashboard")).html).toContain(shop.business.name);
  });

  it("keeps a session issued before sharding, and its key, working", async () => {
    const earlier = await signInOwner(shardDependencies("legacy"), shop.owner);
    const jar = new CookieJar();
    jar.cookies.set(SESSION_COOKIE, earlier?.token ?? "");
    await expect(await page(jar, "/dashboard")).toHaveStatus(200);
    expect(shop.apiKey).toMatch(/^sk_live_[A-Za-z0-9_-]{43}$/);
    await expect(await call("/api/v1/me", { key: shop.apiKey })).toHaveStatus(200);
  });
});

/**
 * A sign-in's D1 queries and PBKDF2 derivations over HTTP, with a fresh sign-in form: the queries as their SQL, in
 * order, over every database.
 */
async function signInCost(email: string, password: string) {
  const jar = new CookieJar();
  const csrf = csrfTokenOf(await (await browse(jar, "/dashboard/sign-in")).text());
  const { bindings, trips } = countingShards(env);
  const derivations = vi.spyOn(crypto.subtle, "deriveBits");
  try {
    const request = new Request(`${BASE}/dashboard/sign-in`, {
      method: "POST",
      headers: { Origin: BASE, Cookie: jar.header(), "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ csrf_token: csrf, email, password }).toString(),
    });
    const response = await dispatch(request, bindings);
    return { status: response.status, trips, derivations: derivations.mock.calls.length };
  } finally {
    derivations.mockRestore();
  }
}

describe("sign-in takes as long for an unknown email as for a known one (docs/scaling.md, Sign-in)", async () => {
  const regional = await createOwnerBusiness({ shard: "eu1" });
  const legacy = await createOwnerBusiness({ shard: "legacy" });

  it("makes the same queries and one PBKDF2 for an unknown email, a regional owner's and a legacy owner's", async () => {
    const unknown = await signInCost(`nobody-${crypto.randomUUID()}@example.com`, "wrong password");
    const wrongRegional = await signInCost(regional.owner.email, "wrong password");
    const wrongLegacy = await signInCost(legacy.owner.email, "wrong password");
    expect(unknown).toMatchObject({ status: 401, derivations: 1 });
    // The directory's read in the global database, then the owners' read in the shard it names.
    expect(unknown.trips).toHaveLength(2);
    expect(wrongRegional).toEqual(unknown);
    expect(wrongLegacy).toEqual(unknown);
  });

  it("signs the regional owner in with the same queries, then stores the session in one more", async () => {
    const known = await signInCost(regional.owner.email, regional.owner.password);
    expect(known.status).toBe(303);
    expect(known.derivations).toBe(1);
    expect(known.trips).toHaveLength(3);
  });

  it("refuses a wrong password for a regional owner with 401 and starts no session", async () => {
    const other = new CookieJar();
    const form = await browse(other, "/dashboard/sign-in");
    const refused = await post(other, "/dashboard/sign-in", {
      csrf_token: csrfTokenOf(await form.text()),
      email: regional.owner.email,
      password: "wrong",
    });
    await expect(refused).toHaveStatus(401);
    expect(other.cookies.has(SESSION_COOKIE)).toBe(false);
  });
});
