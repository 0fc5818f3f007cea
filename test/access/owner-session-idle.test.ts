import { describe, expect, it } from "vitest";
import {
  findOwnerSession,
  recordSessionUse,
  SESSION_IDLE_MS,
  SESSION_USE_PRECISION_MS,
  sessionUseToRecord,
  signInOwner,
} from "../../src/domain/access/owner-sign-in";
import { page, signedIn } from "../helpers/dashboard";
import { deps } from "../helpers/dependencies";
import { browse, createOwnerBusiness } from "../helpers/oauth";
import { sessionRow, timePasses } from "../helpers/owner-sessions";

// docs/architecture.md, Sign-in: an owner session unused for 30 minutes ends, and its use is recorded at most every 5
// minutes; its 12 hours from the sign-in stay (test/access/owner-sign-in.test.ts).

const MINUTE = 60_000;
const shop = await createOwnerBusiness();
const T0 = Date.parse("2026-11-22T10:00:00.000Z");
const at = (ms: number) => new Date(T0 + ms).toISOString();

async function signInAt(now: number) {
  const signed = await signInOwner(deps, shop.owner, now);
  if (!signed) throw new Error("not signed in");
  return signed.token;
}

describe("the owner session's idle timeout (the clock passed as now)", () => {
  it("is 30 minutes, and ends a session unused for that long from its sign-in", async () => {
    expect({ idle: SESSION_IDLE_MS, precision: SESSION_USE_PRECISION_MS }).toEqual({
      idle: 30 * MINUTE,
      precision: 5 * MINUTE,
    });
    const token = await signInAt(T0);
    expect((await findOwnerSession(deps, token, T0 + SESSION_IDLE_MS - 1))?.lastUsedAt).toBe(at(0));
    expect(await findOwnerSession(deps, token, T0 + SESSION_IDLE_MS)).toBeUndefined();
  });

  it("records a use at most every 5 minutes, and counts the idle time from the last one recorded", async () => {
    const token = await signInAt(T0);
    const seen = async (now: number) => {
      const session = await findOwnerSession(deps, token, now);
      if (!session) throw new Error(`no session at ${at(now - T0)}`);
      return session;
    };
    expect(sessionUseToRecord(await seen(T0 + SESSION_USE_PRECISION_MS - 1), T0 + SESSION_USE_PRECISION_MS - 1)).toBe(
      false,
    );
    const later = T0 + 20 * MINUTE;
    const session = await seen(later);
    expect(sessionUseToRecord(session, later)).toBe(true);
    await recordSessionUse(deps, session, later);
    // Another request that read the session before that record records too, a moment later: it changes nothing.
    await recordSessionUse(deps, session, later + MINUTE);
    expect((await seen(later + MINUTE)).lastUsedAt).toBe(at(20 * MINUTE));
    expect(sessionUseToRecord(await seen(later + MINUTE), later + MINUTE)).toBe(false);
    // 50 minutes after the sign-in, 30 after the recorded use: ended.
    expect((await seen(later + SESSION_IDLE_MS - 1)).ownerId).toBe(shop.owner.id);
    expect(await findOwnerSession(deps, token, later + SESSION_IDLE_MS)).toBeUndefined();
  });
});

describe("the owner session's idle timeout over HTTP (the session's stored times driven)", () => {
  const sentToSignIn = async (jar: Awaited<ReturnType<typeof signedIn>>) => {
    const response = await browse(jar, "/dashboard");
    return response.status === 303 && response.headers.get("Location") === "/dashboard/sign-in";
  };

  it("sends the owner to sign in again once the session has gone 30 minutes unused", async () => {
    const jar = await signedIn(shop);
    await timePasses(jar, SESSION_IDLE_MS - MINUTE);
    await expect(await page(jar, "/dashboard/keys")).toHaveStatus(200);
    const idle = await signedIn(shop);
    await timePasses(idle, SESSION_IDLE_MS);
    expect(await sentToSignIn(idle)).toBe(true);
  });

  it("keeps a session in use alive past 30 minutes, writing its use at most once every 5 minutes", async () => {
    const jar = await signedIn(shop);
    // The sign-in is the first use: nothing is written for the pages right after it.
    await expect(await page(jar, "/dashboard")).toHaveStatus(200);
    expect((await sessionRow(jar))?.lastUsedAt).toBeNull();
    await timePasses(jar, 20 * MINUTE);
    const before = Date.now();
    await expect(await page(jar, "/dashboard")).toHaveStatus(200);
    const recorded = (await sessionRow(jar))?.lastUsedAt ?? "";
    expect(Date.parse(recorded)).toBeGreaterThanOrEqual(before);
    await timePasses(jar, 2 * MINUTE);
    const shifted = (await sessionRow(jar))?.lastUsedAt;
    for (const path of ["/dashboard", "/dashboard/keys", "/dashboard/apps"]) {
      await expect(await page(jar, path)).toHaveStatus(200);
    }
    expect((await sessionRow(jar))?.lastUsedAt).toBe(shifted);
    // 42 minutes after the sign-in, 22 after the recorded use: still signed in; 30 after it, not.
    await timePasses(jar, 20 * MINUTE);
    await expect(await page(jar, "/dashboard")).toHaveStatus(200);
    await timePasses(jar, SESSION_IDLE_MS);
    expect(await sentToSignIn(jar)).toBe(true);
  });
});
