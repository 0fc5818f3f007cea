import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { ownerSessions } from "../../src/db/schema";
import { sha256Hex } from "../../src/lib/secrets";
import { requestAuthorization } from "../helpers/authorize";
import { db } from "../helpers/fixtures";
import { call } from "../helpers/http";
import {
  authorizeQuery,
  browse,
  CookieJar,
  createOwnerBusiness,
  csrfTokenOf,
  registerClient,
  signIn,
  validAuthorizationParams,
} from "../helpers/oauth";

const owner = await createOwnerBusiness({ name: "Bella Hair Studio" });
const client = await registerClient({ client_name: "Booking Tool" });

describe("the sign-in page", () => {
  it("shows the app's name, escaped, with a CSRF-protected form and cannot be framed", async () => {
    const hostile = await registerClient({ client_name: "<script>alert(1)</script> & Co" });
    const { response } = await requestAuthorization(hostile);
    await expect(response).toHaveStatus(200);
    const html = await response.text();
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co");
    expect(html).not.toContain("<script>");
    expect(html).toContain(
      "The name “&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co” is how the app describes itself; we have not verified it.",
    );
    expect(html).toContain('name="password"');
    expect(csrfTokenOf(html)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(response.headers.get("X-Frame-Options")).toBe("DENY");
    const csp = response.headers.get("Content-Security-Policy") ?? "";
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(response.headers.get("Cache-Control")).toBe("no-store");
    const cookie = response.headers
      .getAll("Set-Cookie")
      .find((line: string) => line.startsWith("__Host-sign_in_csrf="));
    expect(cookie).toMatch(/; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
  });

  it("sends no CORS headers", async () => {
    const { params } = await validAuthorizationParams(client);
    const response = await call(`/oauth/authorize?${authorizeQuery(params)}`, {
      headers: { Origin: "https://evil.example" },
    });
    expect(response.headers.get("Access-Control-Allow-Origin")).toBeNull();
    const preflight = await call(`/oauth/authorize?${authorizeQuery(params)}`, {
      method: "OPTIONS",
      headers: { Origin: "https://evil.example", "Access-Control-Request-Method": "POST" },
    });
    expect(preflight.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("signs the owner in: 303 back to the request, a session cookie HttpOnly Secure SameSite=Lax, stored hashed", async () => {
    const { params } = await validAuthorizationParams(client);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    const page = await browse(jar, `/oauth/authorize?${query}`);
    const response = await browse(jar, `/oauth/authorize/sign-in?${query}`, {
      form: { csrf_token: csrfTokenOf(await page.text()), email: owner.owner.email, password: owner.owner.password },
    });
    await expect(response).toHaveStatus(303);
    expect(response.headers.get("Location")).toBe(`/oauth/authorize?${query}`);
    const cookie = response.headers
      .getAll("Set-Cookie")
      .find((line: string) => line.startsWith("__Host-owner_session="));
    expect(cookie).toMatch(
      /^__Host-owner_session=eu1_[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
    const token = jar.cookies.get("__Host-owner_session") ?? "";
    const sessions = await db.select().from(ownerSessions).where(eq(ownerSessions.ownerId, owner.owner.id));
    expect(sessions.map((session) => session.tokenHash)).toContain(sha256Hex(token));
    expect(JSON.stringify(sessions)).not.toContain(token);
    // The double-submit cookie of the sign-in form is spent.
    expect(jar.cookies.has("__Host-sign_in_csrf")).toBe(false);
  });

  it("accepts the email in any case", async () => {
    const { params } = await validAuthorizationParams(client);
    const consent = await signIn(new CookieJar(), authorizeQuery(params), {
      email: `  ${owner.owner.email.toUpperCase()} `,
      password: owner.owner.password,
    });
    await expect(consent).toHaveStatus(200);
  });

  it.each([
    ["a wrong password", () => owner.owner.email, "wrong password"],
    ["an unknown email", () => "nobody@example.com", "whatever"],
  ])("refuses %s with the same sentence and no session", async (_case, email, password) => {
    const { params } = await validAuthorizationParams(client);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    const page = await browse(jar, `/oauth/authorize?${query}`);
    const response = await browse(jar, `/oauth/authorize/sign-in?${query}`, {
      form: { csrf_token: csrfTokenOf(await page.text()), email: email(), password },
    });
    await expect(response).toHaveStatus(401);
    expect(await response.text()).toContain("The email address or password is not correct.");
    expect(jar.cookies.has("__Host-owner_session")).toBe(false);
  });

  it.each([
    ["without the CSRF token", (_token: string) => undefined, true],
    ["with a wrong CSRF token", (_token: string) => "A".repeat(43), true],
    ["with the token but without its cookie", (token: string) => token, false],
  ])("refuses a sign-in form %s (403, no session)", async (_case, tokenOf, keepCookie) => {
    const { params } = await validAuthorizationParams(client);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    const token = csrfTokenOf(await (await browse(jar, `/oauth/authorize?${query}`)).text());
    if (!keepCookie) jar.cookies.clear();
    const response = await browse(jar, `/oauth/authorize/sign-in?${query}`, {
      form: { csrf_token: tokenOf(token), email: owner.owner.email, password: owner.owner.password },
    });
    await expect(response).toHaveStatus(403);
    expect(await response.text()).toContain("The form expired");
    expect(jar.cookies.has("__Host-owner_session")).toBe(false);
  });

  it("shows the sign-in page again once the session has expired", async () => {
    const { params } = await validAuthorizationParams(client);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    expect(await (await signIn(jar, query, owner.owner)).text()).toContain("Approve");
    const token = jar.cookies.get("__Host-owner_session") ?? "";
    await db
      .update(ownerSessions)
      .set({ expiresAt: "2020-01-01T00:00:00.000Z" })
      .where(eq(ownerSessions.tokenHash, sha256Hex(token)));
    const page = await (await browse(jar, `/oauth/authorize?${query}`)).text();
    expect(page).toContain('name="password"');
    expect(page).not.toContain("Approve");
  });

  it("signs out (CSRF-protected): the session ends and the sign-in page returns", async () => {
    const { params } = await validAuthorizationParams(client);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    const consent = await (await signIn(jar, query, owner.owner)).text();
    const token = jar.cookies.get("__Host-owner_session") ?? "";
    const forged = await browse(jar, `/oauth/authorize/sign-out?${query}`, { form: { csrf_token: "B".repeat(43) } });
    await expect(forged).toHaveStatus(403);
    const response = await browse(jar, `/oauth/authorize/sign-out?${query}`, {
      form: { csrf_token: csrfTokenOf(consent) },
    });
    await expect(response).toHaveStatus(303);
    expect(jar.cookies.has("__Host-owner_session")).toBe(false);
    expect(
      await db
        .select()
        .from(ownerSessions)
        .where(eq(ownerSessions.tokenHash, sha256Hex(token))),
    ).toEqual([]);
  });
});
