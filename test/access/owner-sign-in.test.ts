import { eq } from "drizzle-orm";
import { describe, expect, it, vi } from "vitest";
import { ownerSessions, owners } from "../../src/db/schema";
import {
  csrfTokenMatches,
  findOwnerSession,
  recordSessionUse,
  SESSION_LIFETIME_MS,
  signInOwner,
  signOutOwner,
} from "../../src/domain/access/owner-sign-in";
import { hashPassword, verifyPassword } from "../../src/lib/password";
import { sha256Hex } from "../../src/lib/secrets";
import { deps } from "../helpers/dependencies";
import { createBusiness, db } from "../helpers/fixtures";
import { createOwnerBusiness } from "../helpers/oauth";

/** Written with node:crypto by an earlier seed's own hashPassword("demo-password"): another implementation of the format agrees. */
const SEEDED_HASH = "pbkdf2-sha256$100000$WW898hAXSxf4mRy23vkC3g$X9h0bQVqDpLEjnphfi88j_aeonnWQR_VFRmeGJL7yV8";
const SEEDED_UNICODE_HASH = "pbkdf2-sha256$100000$eFNEt89tGHnVxQAyb86o4A$f0YzJ2HBRc13qXaX6JboqhfdsCiyYIVbLjHLDTP3FeI";

describe("owner passwords: PBKDF2-SHA256 through WebCrypto, in the seed's format", () => {
  it("verifies a hash written by the seed script (node:crypto)", async () => {
    expect(await verifyPassword("demo-password", SEEDED_HASH)).toBe(true);
    expect(await verifyPassword("demo-password ", SEEDED_HASH)).toBe(false);
    expect(await verifyPassword("p+%:ß €", SEEDED_UNICODE_HASH)).toBe(true);
  });

  it("writes the same format and verifies its own hashes", async () => {
    const stored = await hashPassword("s3cret");
    expect(stored).toMatch(/^pbkdf2-sha256\$100000\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(await verifyPassword("s3cret", stored)).toBe(true);
    expect(await verifyPassword("S3cret", stored)).toBe(false);
    expect(await hashPassword("s3cret")).not.toBe(stored);
  });

  it.each([
    ["another scheme", SEEDED_HASH.replace("pbkdf2-sha256", "bcrypt")],
    ["more iterations than WebCrypto on Workers allows", SEEDED_HASH.replace("$100000$", "$100001$")],
    ["zero iterations", SEEDED_HASH.replace("$100000$", "$0$")],
    ["a hash of the wrong length", `${SEEDED_HASH}AA`],
    ["a missing part", "pbkdf2-sha256$100000$WW898hAXSxf4mRy23vkC3g"],
    ["an extra part", `${SEEDED_HASH}$x`],
    ["not base64url", SEEDED_HASH.replace("WW898", "WW8*8")],
  ])("refuses %s", async (_case, stored) => {
    expect(await verifyPassword("demo-password", stored)).toBe(false);
  });

  it("spends a full PBKDF2 even for an unknown owner, so timing does not reveal accounts", async () => {
    const spy = vi.spyOn(crypto.subtle, "deriveBits");
    try {
      expect(await verifyPassword("anything", undefined)).toBe(false);
      expect(spy).toHaveBeenCalledTimes(1);
      const [algorithm] = spy.mock.calls[0] ?? [];
      expect(algorithm).toMatchObject({ name: "PBKDF2", iterations: 100_000 });
    } finally {
      spy.mockRestore();
    }
  });
});

describe("owner sessions (docs/architecture.md, Sign-in)", () => {
  it("starts a session stored as a hash, with its own CSRF token, for 12 hours", async () => {
    const shop = await createOwnerBusiness();
    const now = Date.parse("2026-11-22T10:00:00.000Z");
    const signedIn = await signInOwner(deps, shop.owner, now);
    expect(signedIn?.token).toMatch(/^eu1_[A-Za-z0-9_-]{43}$/);
    expect(signedIn?.session).toMatchObject({
      ownerId: shop.owner.id,
      email: shop.owner.email,
      csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      expiresAt: new Date(now + SESSION_LIFETIME_MS).toISOString(),
    });
    expect(signedIn?.session.business.id).toBe(shop.business.id);
    const row = await db
      .select()
      .from(ownerSessions)
      .where(eq(ownerSessions.id, signedIn?.session.sessionId ?? 0))
      .get();
    expect(row?.tokenHash).toBe(sha256Hex(signedIn?.token ?? ""));
    expect(signedIn?.session.csrfToken).not.toBe(signedIn?.token);
  });

  it("finds a live session and not an expired one, even just used (the clock passed as now)", async () => {
    const shop = await createOwnerBusiness();
    const now = Date.parse("2026-11-22T10:00:00.000Z");
    const signedIn = await signInOwner(deps, shop.owner, now);
    const token = signedIn?.token;
    // Used 10 minutes before its end, so not idle (test/access/owner-session-idle.test.ts): its 12 hours still end it.
    if (signedIn) await recordSessionUse(deps, signedIn.session, now + SESSION_LIFETIME_MS - 10 * 60_000);
    expect((await findOwnerSession(deps, token, now + SESSION_LIFETIME_MS - 1))?.ownerId).toBe(shop.owner.id);
    expect(await findOwnerSession(deps, token, now + SESSION_LIFETIME_MS)).toBeUndefined();
    expect(await findOwnerSession(deps, undefined)).toBeUndefined();
    expect(await findOwnerSession(deps, "short")).toBeUndefined();
  });

  it("clears the owner's expired sessions at the next sign-in, and each sign-in is a new session", async () => {
    const shop = await createOwnerBusiness();
    const old = await signInOwner(deps, shop.owner, Date.parse("2020-01-01T00:00:00.000Z"));
    const fresh = await signInOwner(deps, shop.owner);
    const again = await signInOwner(deps, shop.owner);
    const ids = (await db.select().from(ownerSessions).where(eq(ownerSessions.ownerId, shop.owner.id))).map(
      (s) => s.id,
    );
    expect(ids).not.toContain(old?.session.sessionId);
    expect(ids).toEqual([fresh?.session.sessionId, again?.session.sessionId]);
  });

  it("refuses a wrong password, an unknown email and oversized input", async () => {
    const shop = await createOwnerBusiness();
    expect(await signInOwner(deps, { email: shop.owner.email, password: "nope" })).toBeUndefined();
    expect(await signInOwner(deps, { email: "nobody@example.com", password: shop.owner.password })).toBeUndefined();
    expect(await signInOwner(deps, { email: "", password: "" })).toBeUndefined();
    expect(await signInOwner(deps, { email: shop.owner.email, password: "x".repeat(1025) })).toBeUndefined();
    expect(await signInOwner(deps, { email: `${"a".repeat(250)}@x.io`, password: "x" })).toBeUndefined();
  });

  it("signs in the seeded owner format", async () => {
    const { business } = await createBusiness();
    await db.insert(owners).values({
      businessId: business.id,
      email: `seeded-${business.handle}@example.com`,
      passwordHash: SEEDED_HASH,
      createdAt: business.createdAt,
    });
    const signedIn = await signInOwner(deps, {
      email: `seeded-${business.handle}@example.com`,
      password: "demo-password",
    });
    expect(signedIn?.session.business.id).toBe(business.id);
  });

  it("signs out", async () => {
    const shop = await createOwnerBusiness();
    const signedIn = await signInOwner(deps, shop.owner);
    await signOutOwner(deps, signedIn?.token);
    expect(await findOwnerSession(deps, signedIn?.token)).toBeUndefined();
  });

  it("compares CSRF tokens in full", () => {
    const token = "a".repeat(43);
    expect(csrfTokenMatches(token, token)).toBe(true);
    expect(csrfTokenMatches(token, `${"a".repeat(42)}b`)).toBe(false);
    expect(csrfTokenMatches(token, undefined)).toBe(false);
    expect(csrfTokenMatches(token, ["a".repeat(43)])).toBe(false);
    expect(csrfTokenMatches(undefined, token)).toBe(false);
    expect(csrfTokenMatches(token, "")).toBe(false);
  });
});
