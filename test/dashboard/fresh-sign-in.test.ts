import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, oauthGrants } from "../../src/db/schema";
import { FRESH_SIGN_IN_MS } from "../../src/domain/access/fresh-sign-in";
import { SIGN_IN_FAILURE_LIMITS } from "../../src/durable-objects/sign-in-throttle";
import { page, post, signedIn, signInAttempt, submit, testIdText } from "../helpers/dashboard";
import { createApiKey, db } from "../helpers/fixtures";
import { CookieJar, connectApp, createOwnerBusiness, csrfTokenOf, me } from "../helpers/oauth";
import { timePasses } from "../helpers/owner-sessions";

// docs/security.md, Owner sessions and refresh tokens: creating an API key and disconnecting an app ask for the
// password once the session's sign-in is 10 minutes old; a fresh sign-in is enough. The session's stored times drive
// the clock (test/helpers/owner-sessions.ts).

const MINUTE = 60_000;
const PASSWORD_FIELD = 'name="password"';
const keysOf = (businessId: string) => db.$count(apiKeys, eq(apiKeys.businessId, businessId));
const grantRevokedAt = async (grantId: number) =>
  (await db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId)).get())?.revokedAt;

/** The owner signed in `ago` milliseconds ago (and has used the dashboard since, so the session is not idle). */
async function signedInAgo(owner: Awaited<ReturnType<typeof createOwnerBusiness>>, ago: number) {
  const jar = await signedIn(owner);
  await timePasses(jar, ago);
  return jar;
}

describe("creating an API key", () => {
  it("is 10 minutes after the sign-in that the password is asked for", () => {
    expect(FRESH_SIGN_IN_MS).toBe(10 * MINUTE);
  });

  it("asks a sign-in 10 minutes old for the password: without it, or wrong, no key; right, the key", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedInAgo(shop, FRESH_SIGN_IN_MS);
    const form = await page(jar, "/dashboard/keys");
    expect(form.html).toContain(PASSWORD_FIELD);
    const before = await keysOf(shop.business.id);

    for (const [password, error] of [
      [undefined, "Enter your password to confirm"],
      ["", "Enter your password to confirm"],
      ["not my password", "The password is not correct. Nothing was changed."],
    ] as const) {
      const csrf = csrfTokenOf(form.html);
      const refused = await post(jar, "/dashboard/keys", { csrf_token: csrf, label: "Confirmed tool", password });
      await expect(refused).toHaveStatus(401);
      const html = await refused.text();
      expect(testIdText(html, "password-error")).toContain(error);
      // The form comes back with the name typed and the password field, and nothing was created.
      expect(html).toContain('value="Confirmed tool"');
      expect(html).toContain(PASSWORD_FIELD);
      expect(html).not.toContain('data-testid="new-key"');
      expect(await keysOf(shop.business.id)).toBe(before);
    }

    const created = await submit(jar, "/dashboard/keys", "/dashboard/keys", {
      label: "Confirmed tool",
      password: shop.owner.password,
    });
    await expect(created).toHaveStatus(201);
    const key = testIdText(await created.text(), "new-key");
    await expect(await me(key)).toHaveStatus(200);
    expect(await keysOf(shop.business.id)).toBe(before + 1);
  });

  it("needs no password within 10 minutes of the sign-in", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedInAgo(shop, FRESH_SIGN_IN_MS - MINUTE);
    expect((await page(jar, "/dashboard/keys")).html).not.toContain(PASSWORD_FIELD);
    const before = await keysOf(shop.business.id);
    const created = await submit(jar, "/dashboard/keys", "/dashboard/keys", { label: "Confirmed tool" });
    await expect(created).toHaveStatus(201);
    expect(await keysOf(shop.business.id)).toBe(before + 1);
  });

  it("counts wrong passwords as failed sign-ins: past the limit even the right one is refused, and sign-in too", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedInAgo(shop, FRESH_SIGN_IN_MS);
    const csrf = csrfTokenOf((await page(jar, "/dashboard/keys")).html);
    const attempt = (password: string) =>
      post(jar, "/dashboard/keys", { csrf_token: csrf, label: "Guessing", password });
    for (let i = 0; i < SIGN_IN_FAILURE_LIMITS.email; i++) await expect(await attempt(`guess ${i}`)).toHaveStatus(401);
    const before = await keysOf(shop.business.id);
    const locked = await attempt(shop.owner.password);
    await expect(locked).toHaveStatus(429);
    expect(Number(locked.headers.get("Retry-After"))).toBeGreaterThan(0);
    expect(testIdText(await locked.text(), "password-error")).toContain("Too many sign-in attempts have failed");
    expect(await keysOf(shop.business.id)).toBe(before);

    // The same count as the sign-in page's: the owner's email is locked there too.
    await expect(await signInAttempt(new CookieJar(), shop)).toHaveStatus(429);
  });

  it("does not ask before revoking a key, which only takes access away", async () => {
    const shop = await createOwnerBusiness();
    const jar = await signedInAgo(shop, FRESH_SIGN_IN_MS + MINUTE);
    const { apiKey, apiKeyId } = await createApiKey(shop.business.id);
    const path = `/dashboard/keys/${apiKeyId}/revoke`;
    expect((await page(jar, path)).html).not.toContain(PASSWORD_FIELD);
    await expect(await submit(jar, path, path)).toHaveStatus(303);
    await expect(await me(apiKey)).toHaveStatus(401);
  });
});

describe("disconnecting an app", () => {
  it("asks a sign-in 10 minutes old for the password: without it, or wrong, the app stays; right, it goes", async () => {
    const shop = await createOwnerBusiness();
    const app = await connectApp(shop);
    const jar = await signedInAgo(shop, FRESH_SIGN_IN_MS);
    const path = `/dashboard/apps/${app.grantId}/disconnect`;
    const confirmation = await page(jar, path);
    expect(confirmation.html).toContain(PASSWORD_FIELD);

    for (const [password, error] of [
      [undefined, "Enter your password to confirm"],
      ["not my password", "The password is not correct. Nothing was changed."],
    ] as const) {
      const refused = await post(jar, path, { csrf_token: csrfTokenOf(confirmation.html), password });
      await expect(refused).toHaveStatus(401);
      const html = await refused.text();
      expect(testIdText(html, "password-error")).toContain(error);
      expect(testIdText(html, "stops")).toContain("every token it holds is refused");
      expect(await grantRevokedAt(app.grantId)).toBeNull();
      await expect(await me(app.tokens.access_token)).toHaveStatus(200);
    }

    const disconnected = await submit(jar, path, path, { password: shop.owner.password });
    await expect(disconnected).toHaveStatus(303);
    expect(disconnected.headers.get("Location")).toBe("/dashboard/apps");
    expect(await grantRevokedAt(app.grantId)).not.toBeNull();
    await expect(await me(app.tokens.access_token)).toHaveStatus(401);
  });

  it("needs no password within 10 minutes of the sign-in", async () => {
    const shop = await createOwnerBusiness();
    const app = await connectApp(shop);
    const jar = await signedInAgo(shop, FRESH_SIGN_IN_MS - MINUTE);
    const path = `/dashboard/apps/${app.grantId}/disconnect`;
    expect((await page(jar, path)).html).not.toContain(PASSWORD_FIELD);
    await expect(await submit(jar, path, path)).toHaveStatus(303);
    expect(await grantRevokedAt(app.grantId)).not.toBeNull();
  });
});
