import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, oauthCodes, oauthGrants } from "../../src/db/schema";
import { sha256Hex } from "../../src/lib/secrets";
import { codesOf, expectErrorPage } from "../helpers/authorize";
import { signedIn } from "../helpers/dashboard";
import { db } from "../helpers/fixtures";
import { BASE, call } from "../helpers/http";
import {
  authorizeQuery,
  browse,
  CookieJar,
  connectApp,
  createOwnerBusiness,
  csrfTokenOf,
  decide,
  ISSUER,
  REDIRECT_URI,
  registerClient,
  signIn,
  validAuthorizationParams,
} from "../helpers/oauth";

const owner = await createOwnerBusiness({ name: "Bella Hair Studio" });
const client = await registerClient({ client_name: "Booking Tool" });

describe("the consent page and the owner's answer (docs/oauth.md, 2. Send the owner to the authorization page)", () => {
  it("names the app, the business, what the app may do, and cannot be framed", async () => {
    const { params } = await validAuthorizationParams(client);
    const consent = await signIn(new CookieJar(), authorizeQuery(params), owner.owner);
    await expect(consent).toHaveStatus(200);
    const html = await consent.text();
    expect(html).toContain("Connect Booking Tool to Bella Hair Studio?");
    for (const line of [
      "Read your business details, appointments and orders",
      "Subscribe to webhooks",
      "Push knowledge",
      "Register connected actions and intakes, each off until you switch it on",
    ]) {
      expect(html).toContain(line);
    }
    expect(html).toContain('value="approve"');
    expect(html).toContain('value="refuse"');
    // docs/architecture.md, OAuth: the redirect host, and the app's name as the app's own claim.
    expect(html).toContain("Either way you go back to partner.example.");
    expect(html).toContain("The name “Booking Tool” is how the app describes itself; we have not verified it.");
    expect(consent.headers.get("X-Frame-Options")).toBe("DENY");
    // The POST is followed by a redirect to the app, which form-action must allow.
    expect(consent.headers.get("Content-Security-Policy")).toContain(
      "form-action 'self' https://partner.example; frame-ancestors 'none'",
    );
  });

  it("approves: 303 to the redirect URI with code, state and iss; the code is stored hashed, 10 minutes", async () => {
    const { params } = await validAuthorizationParams(client);
    const before = Date.now();
    const location = await decide(authorizeQuery(params), owner.owner, "approve");
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect([...location.searchParams.keys()]).toEqual(["code", "state", "iss"]);
    expect(location.searchParams.get("state")).toBe(params.state);
    expect(location.searchParams.get("iss")).toBe(ISSUER);
    const code = location.searchParams.get("code") ?? "";
    const stored = await db
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, sha256Hex(code)))
      .get();
    expect(stored).toMatchObject({ redirectUri: REDIRECT_URI, codeChallenge: params.code_challenge, usedAt: null });
    const lifetime = Date.parse(stored?.expiresAt ?? "") - before;
    expect(lifetime).toBeGreaterThan(9.9 * 60_000);
    expect(lifetime).toBeLessThanOrEqual(10 * 60_000 + 1000);
    expect(JSON.stringify(await db.select().from(oauthCodes))).not.toContain(code);
  });

  it("refuses: 303 with error=access_denied, state and iss, and no code or connection", async () => {
    const refusing = await registerClient();
    const { params } = await validAuthorizationParams(refusing);
    const location = await decide(authorizeQuery(params), owner.owner, "refuse");
    expect(location.searchParams.get("error")).toBe("access_denied");
    expect(location.searchParams.get("state")).toBe(params.state);
    expect(location.searchParams.get("iss")).toBe(ISSUER);
    expect(location.searchParams.has("code")).toBe(false);
    expect(await db.select().from(oauthGrants).where(eq(oauthGrants.clientId, refusing.client_id))).toEqual([]);
  });

  it.each([
    ["without the CSRF token", (_mine: string, _theirs: string) => undefined],
    ["with a wrong CSRF token", (_mine: string, _theirs: string) => "C".repeat(43)],
    ["with the CSRF token of another session", (_mine: string, theirs: string) => theirs],
  ])("refuses an approval %s (403, no code)", async (_case, pick) => {
    const app = await registerClient();
    const { params } = await validAuthorizationParams(app);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    const mine = csrfTokenOf(await (await signIn(jar, query, owner.owner)).text());
    const theirs = csrfTokenOf(await (await signIn(new CookieJar(), query, owner.owner)).text());
    const response = await browse(jar, `/oauth/authorize?${query}`, {
      form: { csrf_token: pick(mine, theirs), decision: "approve" },
    });
    await expect(response).toHaveStatus(403);
    expect(response.headers.get("Location")).toBeNull();
    expect(await codesOf(app.client_id)).toEqual([]);
  });

  it("sends a POST without a session back to the sign-in page, approving nothing", async () => {
    const app = await registerClient();
    const { params } = await validAuthorizationParams(app);
    const query = authorizeQuery(params);
    const response = await browse(new CookieJar(), `/oauth/authorize?${query}`, {
      form: { csrf_token: "D".repeat(43), decision: "approve" },
    });
    await expect(response).toHaveStatus(303);
    expect(response.headers.get("Location")).toBe(`/oauth/authorize?${query}`);
    expect(await codesOf(app.client_id)).toEqual([]);
  });

  it("does not take a partner credential for the owner (tokens cannot approve anything)", async () => {
    const { tokens } = await connectApp(owner);
    const app = await registerClient();
    const { params } = await validAuthorizationParams(app);
    for (const credential of [tokens.access_token, owner.apiKey]) {
      const response = await call(`/oauth/authorize?${authorizeQuery(params)}`, {
        method: "POST",
        body: "decision=approve",
        headers: {
          Authorization: `Bearer ${credential}`,
          "Content-Type": "application/x-www-form-urlencoded",
          Origin: BASE,
        },
      });
      await expect(response).toHaveStatus(303);
      expect(response.headers.get("Location")).toMatch(/^\/oauth\/authorize\?/);
    }
    expect(await codesOf(app.client_id)).toEqual([]);
  });

  it("checks the request again on the POST: a tampered redirect_uri gets the error page", async () => {
    const { params } = await validAuthorizationParams(client);
    const jar = new CookieJar();
    const csrf = csrfTokenOf(await (await signIn(jar, authorizeQuery(params), owner.owner)).text());
    const tampered = authorizeQuery({ ...params, redirect_uri: "https://evil.example/cb" });
    await expectErrorPage(
      await browse(jar, `/oauth/authorize?${tampered}`, { form: { csrf_token: csrf, decision: "approve" } }),
      /not one that this app registered/,
    );
  });

  it("shows the consent page again, without a code, for an unknown decision", async () => {
    const app = await registerClient();
    const { params } = await validAuthorizationParams(app);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    const csrf = csrfTokenOf(await (await signIn(jar, query, owner.owner)).text());
    const response = await browse(jar, `/oauth/authorize?${query}`, { form: { csrf_token: csrf, decision: "maybe" } });
    await expect(response).toHaveStatus(303);
    expect(response.headers.get("Location")).toBe(`/oauth/authorize?${query}`);
    expect(await codesOf(app.client_id)).toEqual([]);
  });
});

describe("only on an active Pro or Business plan (docs/oauth.md, 2. Send the owner to the authorization page)", () => {
  it.each([
    ["a lapsed Pro plan", { plan: "pro", active: false } as const, /plan has lapsed/],
    ["a lapsed Business plan", { plan: "business", active: false } as const, /plan has lapsed/],
    ["the Free plan", { plan: "free", active: true } as const, /needs the Pro or Business plan/],
  ])("%s: a clear page and no code, on the page and on a direct POST", async (_case, plan, sentence) => {
    const lapsed = await createOwnerBusiness(plan);
    const app = await registerClient();
    const { params } = await validAuthorizationParams(app);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    const page = await signIn(jar, query, lapsed.owner);
    await expect(page).toHaveStatus(403);
    const html = await page.text();
    expect(html).toMatch(sentence);
    expect(html).not.toContain('value="approve"');
    const approve = await browse(jar, `/oauth/authorize?${query}`, {
      form: { csrf_token: csrfTokenOf(html), decision: "approve" },
    });
    await expect(approve).toHaveStatus(403);
    expect(await approve.text()).toMatch(sentence);
    expect(await codesOf(app.client_id)).toEqual([]);
    // The page's one button takes the owner back to the app, refused.
    const back = await browse(jar, `/oauth/authorize?${query}`, {
      form: { csrf_token: csrfTokenOf(html), decision: "refuse" },
    });
    expect(new URL(back.headers.get("Location") ?? "").searchParams.get("error")).toBe("access_denied");
  });

  it("an active Business plan may connect", async () => {
    const shop = await createOwnerBusiness({ plan: "business" });
    const { params } = await validAuthorizationParams(client);
    const location = await decide(authorizeQuery(params), shop.owner, "approve");
    expect(location.searchParams.get("code")).toMatch(/^ac_/);
  });
});

describe("one connection per client and business", () => {
  it("approving the same app twice reuses its connection", async () => {
    const shop = await createOwnerBusiness();
    const app = await registerClient();
    for (let i = 0; i < 2; i++) {
      const { params } = await validAuthorizationParams(app);
      await decide(authorizeQuery(params), shop.owner, "approve");
    }
    const grants = await db.select().from(oauthGrants).where(eq(oauthGrants.clientId, app.client_id));
    expect(grants).toHaveLength(1);
    expect(await codesOf(app.client_id)).toHaveLength(2);
  });
});

describe("the consent POST comes from our own page, by the dashboard's rule (hono/csrf)", async () => {
  const mine = await createOwnerBusiness({ name: "Origin Check Studio" });
  const app = await registerClient({ client_name: "Origin Check App" });
  const dashboardJar = await signedIn(mine);

  /** A form post with exactly these headers besides the jar's cookies: no Origin unless one is given. */
  const postForm = (jar: CookieJar, path: string, form: Record<string, string>, headers: Record<string, string>) =>
    call(path, {
      method: "POST",
      body: authorizeQuery(form),
      headers: { Cookie: jar.header(), "Content-Type": "application/x-www-form-urlencoded", ...headers },
    });

  // What a browser sends from our page: Sec-Fetch-Site same-origin, and an Origin that is ours, or "null" under the
  // pages' Referrer-Policy no-referrer (the Fetch standard); what another site's form, or a client without either,
  // sends. Each row: the headers, and whether the dashboard takes its form.
  const CASES: Array<[name: string, headers: Record<string, string>, taken: boolean]> = [
    ["our Origin", { Origin: BASE }, true],
    ["Sec-Fetch-Site same-origin, without Origin", { "Sec-Fetch-Site": "same-origin" }, true],
    ["Origin null with Sec-Fetch-Site same-origin", { Origin: "null", "Sec-Fetch-Site": "same-origin" }, true],
    ["another site's Origin", { Origin: "https://evil.example" }, false],
    ["another site's Origin, cross-site", { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" }, false],
    ["our host on another scheme", { Origin: "https://localhost:8787" }, false],
    ["Origin null alone", { Origin: "null" }, false],
    ["Sec-Fetch-Site same-site", { "Sec-Fetch-Site": "same-site" }, false],
    ["neither Origin nor Sec-Fetch-Site", {}, false],
  ];

  it.each(CASES)("%s: the consent form as the dashboard's form (taken: %s)", async (_case, headers, taken) => {
    // The dashboard's rule, measured: a key form with the session's token.
    const keysBefore = await db.$count(apiKeys, eq(apiKeys.businessId, mine.business.id));
    const csrf = csrfTokenOf(await (await browse(dashboardJar, "/dashboard/keys")).text());
    const keyForm = await postForm(
      dashboardJar,
      "/dashboard/keys",
      { label: "origin check", csrf_token: csrf },
      headers,
    );
    await expect(keyForm).toHaveStatus(taken ? 201 : 403);
    expect(await db.$count(apiKeys, eq(apiKeys.businessId, mine.business.id))).toBe(keysBefore + (taken ? 1 : 0));

    // The consent form, with its session's token: the same answer.
    const { params } = await validAuthorizationParams(app);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    const token = csrfTokenOf(await (await signIn(jar, query, mine.owner)).text());
    const codesBefore = (await codesOf(app.client_id)).length;
    const consent = await postForm(
      jar,
      `/oauth/authorize?${query}`,
      { csrf_token: token, decision: "approve" },
      headers,
    );
    if (taken) {
      await expect(consent).toHaveStatus(303);
      expect(new URL(consent.headers.get("Location") ?? "").searchParams.has("code")).toBe(true);
      expect((await codesOf(app.client_id)).length).toBe(codesBefore + 1);
    } else {
      await expect(consent).toHaveStatus(403);
      expect(consent.headers.get("Location")).toBeNull();
      expect(consent.headers.get("Content-Type")).toMatch(/^text\/html/);
      expect(consent.headers.get("X-Frame-Options")).toBe("DENY");
      const html = await consent.text();
      expect(html).toMatch(/^<!doctype html>/);
      expect(html).toContain("The form was not sent from this page, or it has expired. Nothing was changed.");
      expect(html).toContain(`href="/oauth/authorize?${query.replaceAll("&", "&amp;")}"`);
      expect((await codesOf(app.client_id)).length).toBe(codesBefore);
    }
  });

  it("refuses another site's form before reading the request: even a refusal, even an invalid request", async () => {
    const { params } = await validAuthorizationParams(app);
    const query = authorizeQuery(params);
    const jar = new CookieJar();
    const token = csrfTokenOf(await (await signIn(jar, query, mine.owner)).text());
    const foreign = { Origin: "https://evil.example" };
    // A refusal would send the browser to the app: not from another site's form.
    const refused = await postForm(
      jar,
      `/oauth/authorize?${query}`,
      { csrf_token: token, decision: "refuse" },
      foreign,
    );
    await expect(refused).toHaveStatus(403);
    expect(refused.headers.get("Location")).toBeNull();
    // An invalid request gets the 403 too, not the page that would say what is wrong with it.
    const invalid = await postForm(jar, "/oauth/authorize?client_id=nobody", { csrf_token: token }, foreign);
    await expect(invalid).toHaveStatus(403);
    expect(await invalid.text()).not.toContain("No app is registered");
    // The session is untouched: the owner's own page still answers.
    const own = await postForm(
      jar,
      `/oauth/authorize?${query}`,
      { csrf_token: token, decision: "refuse" },
      {
        Origin: BASE,
      },
    );
    await expect(own).toHaveStatus(303);
    expect(new URL(own.headers.get("Location") ?? "").searchParams.get("error")).toBe("access_denied");
  });
});
