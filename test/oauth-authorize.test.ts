import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, oauthCodes, oauthGrants, ownerSessions } from "../src/db/schema";
import { sha256Hex } from "../src/lib/secrets";
import { signedIn } from "./helpers/dashboard";
import { db } from "./helpers/fixtures";
import { BASE, call } from "./helpers/http";
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
} from "./helpers/oauth";

const owner = await createOwnerBusiness({ name: "Bella Hair Studio" });
const client = await registerClient({ client_name: "Booking Tool" });

const codesOf = (clientId: string) =>
  db
    .select({ code: oauthCodes })
    .from(oauthCodes)
    .innerJoin(oauthGrants, eq(oauthGrants.id, oauthCodes.grantId))
    .where(eq(oauthGrants.clientId, clientId));

async function expectErrorPage(response: Response, sentence: RegExp) {
  expect(response.status).toBe(400);
  expect(response.headers.get("Location")).toBeNull();
  expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
  expect(await response.text()).toMatch(sentence);
}

const authorize = async (overrides: Record<string, string | undefined>, target = client) => {
  const { params } = await validAuthorizationParams(target, overrides);
  return { response: await call(`/oauth/authorize?${authorizeQuery(params)}`), params };
};

describe("an unknown client or redirect URI: an error page, never a redirect (RFC 6749 §4.1.2.1)", () => {
  it.each([
    ["no client_id", { client_id: undefined }, /client_id is missing/],
    ["an unknown client_id", { client_id: "cl_unknownunknownunknown" }, /No app is registered/],
    ["a client_id of the wrong shape", { client_id: "<script>" }, /No app is registered/],
    ["no redirect_uri", { redirect_uri: undefined }, /no redirect_uri/],
    ["another path", { redirect_uri: "https://partner.example/oauth/other" }, /not one that this app registered/],
    ["a trailing slash", { redirect_uri: `${REDIRECT_URI}/` }, /not one that this app registered/],
    ["an added query", { redirect_uri: `${REDIRECT_URI}?next=/` }, /not one that this app registered/],
    ["another host", { redirect_uri: "https://evil.example/oauth/callback" }, /not one that this app registered/],
    ["http instead of https", { redirect_uri: "http://partner.example/oauth/callback" }, /not one/],
    ["upper case", { redirect_uri: "https://PARTNER.example/oauth/callback" }, /not one that this app registered/],
  ])("%s", async (_case, overrides, sentence) => {
    await expectErrorPage((await authorize(overrides)).response, sentence);
  });

  it("a repeated client_id or redirect_uri", async () => {
    const { params } = await validAuthorizationParams(client);
    const query = `${authorizeQuery(params)}&client_id=${client.client_id}`;
    await expectErrorPage(await call(`/oauth/authorize?${query}`), /more than once/);
    const twice = `${authorizeQuery(params)}&redirect_uri=${encodeURIComponent(REDIRECT_URI)}`;
    await expectErrorPage(await call(`/oauth/authorize?${twice}`), /more than once/);
  });

  it("escapes what it shows", async () => {
    const response = await call(`/oauth/authorize?client_id=${encodeURIComponent("<b>x</b>")}`);
    expect(await response.text()).not.toContain("<b>x</b>");
  });
});

describe("a loopback redirect URI may change its port, nothing else (RFC 8252 §7.3)", async () => {
  const native = await registerClient({
    redirect_uris: ["http://127.0.0.1/callback"],
    token_endpoint_auth_method: "none",
  });

  it("accepts any port, and sends the code to the port asked for", async () => {
    const { params } = await validAuthorizationParams(native, { redirect_uri: "http://127.0.0.1:51234/callback" });
    const location = await decide(authorizeQuery(params), owner.owner, "approve");
    expect(`${location.origin}${location.pathname}`).toBe("http://127.0.0.1:51234/callback");
    expect(location.searchParams.get("code")).toMatch(/^ac_/);
  });

  it.each([
    "http://127.0.0.1:51234/other",
    "http://localhost:51234/callback",
    "https://127.0.0.1:51234/callback",
    "http://127.0.0.1:99999/callback",
  ])("refuses %s", async (uri) => {
    await expectErrorPage(
      (await authorize({ redirect_uri: uri }, native)).response,
      /not one that this app registered/,
    );
  });
});

describe("other invalid parameters: an error page, never a redirect to the app (RFC 9700 §4.11.2)", async () => {
  // Registration is open: anyone can register a phishing page as a redirect URI and send owners a broken request.
  const phishing = await registerClient({ client_name: "Phish", redirect_uris: ["https://evil.example/phish"] });
  const INVALID: Array<[string, Record<string, string | undefined>, RegExp]> = [
    ["no response_type", { response_type: undefined }, /response_type is required/],
    ["response_type=token", { response_type: "token" }, /Only response_type=code/],
    ["response_type=x", { response_type: "x" }, /Only response_type=code/],
    ["another scope", { scope: "admin" }, /only scope is &quot;api&quot;/],
    ["a scope beside api", { scope: "api admin" }, /only scope/],
    ["no code_challenge", { code_challenge: undefined }, /code_challenge is required/],
    ["no code_challenge_method", { code_challenge_method: undefined }, /S256 is required/],
    ["code_challenge_method=plain", { code_challenge_method: "plain" }, /plain is not accepted/],
    ["a challenge that is no S256 hash", { code_challenge: "short" }, /43-character/],
    ["a state over 1024 characters", { state: "s".repeat(1025) }, /state must be at most 1024/],
    ["no state", { state: undefined }, /parameter state is required/],
  ];
  const REPEATED: Array<[string, string, RegExp]> = [
    ["a repeated scope", "&scope=api", /scope is repeated/],
    ["a repeated state", "&state=other", /state is repeated/],
    ["a repeated response_type", "&response_type=code", /response_type is repeated/],
  ];
  /** Every invalid request above, as the query of a page or form of the flow. */
  const invalidQueries = async () => [
    ...(await Promise.all(
      INVALID.map(async ([, overrides, sentence]) => {
        const { params } = await validAuthorizationParams(phishing, overrides);
        return { query: authorizeQuery(params), sentence };
      }),
    )),
    ...(await Promise.all(
      REPEATED.map(async ([, extra, sentence]) => {
        const { params } = await validAuthorizationParams(phishing);
        return { query: `${authorizeQuery(params)}${extra}`, sentence };
      }),
    )),
  ];

  it.each(INVALID)("without a session, %s: 400 page, no Location", async (_case, overrides, sentence) => {
    const { response } = await authorize(overrides, phishing);
    await expectErrorPage(response, sentence);
  });

  it.each(REPEATED)("without a session, %s: 400 page, no Location", async (_case, extra, sentence) => {
    const { params } = await validAuthorizationParams(phishing);
    await expectErrorPage(await call(`/oauth/authorize?${authorizeQuery(params)}${extra}`), sentence);
  });

  it("with the owner signed in, who has not decided yet: the same page for every case, on GET and on every POST", async () => {
    const jar = new CookieJar();
    const { params } = await validAuthorizationParams(phishing);
    const csrf = csrfTokenOf(await (await signIn(jar, authorizeQuery(params), owner.owner)).text());
    for (const { query, sentence } of await invalidQueries()) {
      await expectErrorPage(await browse(jar, `/oauth/authorize?${query}`), sentence);
      // A decision posted with an invalid request (a forged form) redirects nowhere either, nor approves.
      for (const decision of ["approve", "refuse"]) {
        const posted = await browse(jar, `/oauth/authorize?${query}`, { form: { csrf_token: csrf, decision } });
        await expectErrorPage(posted, sentence);
      }
      await expectErrorPage(
        await browse(jar, `/oauth/authorize/sign-in?${query}`, {
          form: { csrf_token: csrf, email: owner.owner.email, password: owner.owner.password },
        }),
        sentence,
      );
    }
    expect(await codesOf(phishing.client_id)).toEqual([]);
  });

  it("only the owner's decision sends the browser to the app: refuse and approve redirect with state and iss", async () => {
    const { params: refused } = await validAuthorizationParams(phishing);
    const back = await decide(authorizeQuery(refused), owner.owner, "refuse");
    expect(`${back.origin}${back.pathname}`).toBe("https://evil.example/phish");
    expect(Object.fromEntries(back.searchParams)).toMatchObject({
      error: "access_denied",
      state: refused.state,
      iss: ISSUER,
    });
    const { params: approved } = await validAuthorizationParams(phishing);
    const granted = await decide(authorizeQuery(approved), owner.owner, "approve");
    expect(`${granted.origin}${granted.pathname}`).toBe("https://evil.example/phish");
    expect([...granted.searchParams.keys()]).toEqual(["code", "state", "iss"]);
    expect(granted.searchParams.get("state")).toBe(approved.state);
    expect(granted.searchParams.get("iss")).toBe(ISSUER);
  });

  it("keeps the registered redirect URI's own query as written in the owner's answer", async () => {
    const withQuery = await registerClient({ redirect_uris: ["https://partner.example/cb?tenant=a%20b"] });
    const { params } = await validAuthorizationParams(withQuery);
    const location = await decide(authorizeQuery(params), owner.owner, "refuse");
    expect(location.href).toMatch(/^https:\/\/partner\.example\/cb\?tenant=a%20b&error=access_denied&/);
  });

  it("treats a missing scope as api (RFC 6749 §3.3 default)", async () => {
    const { response } = await authorize({ scope: undefined });
    expect(response.status).toBe(200);
  });
});

describe("the sign-in page", () => {
  it("shows the app's name, escaped, with a CSRF-protected form and cannot be framed", async () => {
    const hostile = await registerClient({ client_name: "<script>alert(1)</script> & Co" });
    const { response } = await authorize({}, hostile);
    expect(response.status).toBe(200);
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
    expect(response.status).toBe(303);
    expect(response.headers.get("Location")).toBe(`/oauth/authorize?${query}`);
    const cookie = response.headers
      .getAll("Set-Cookie")
      .find((line: string) => line.startsWith("__Host-owner_session="));
    expect(cookie).toMatch(
      /^__Host-owner_session=[A-Za-z0-9_-]{43}; Max-Age=43200; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
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
    expect(consent.status).toBe(200);
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
    expect(response.status).toBe(401);
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
    expect(response.status).toBe(403);
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
    expect(forged.status).toBe(403);
    const response = await browse(jar, `/oauth/authorize/sign-out?${query}`, {
      form: { csrf_token: csrfTokenOf(consent) },
    });
    expect(response.status).toBe(303);
    expect(jar.cookies.has("__Host-owner_session")).toBe(false);
    expect(
      await db
        .select()
        .from(ownerSessions)
        .where(eq(ownerSessions.tokenHash, sha256Hex(token))),
    ).toEqual([]);
  });
});

describe("the consent page and the owner's answer (spec: Partner sign-in, steps 2 and 3)", () => {
  it("names the app, the business, what the app may do, and cannot be framed", async () => {
    const { params } = await validAuthorizationParams(client);
    const consent = await signIn(new CookieJar(), authorizeQuery(params), owner.owner);
    expect(consent.status).toBe(200);
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
    // DESIGN.md, Security notes: the redirect host, and the app's name as the app's own claim.
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
    expect(response.status).toBe(403);
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
    expect(response.status).toBe(303);
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
      expect(response.status).toBe(303);
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
    expect(response.status).toBe(303);
    expect(response.headers.get("Location")).toBe(`/oauth/authorize?${query}`);
    expect(await codesOf(app.client_id)).toEqual([]);
  });
});

describe("only on an active Pro or Business plan (spec: Partner sign-in, step 2)", () => {
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
    expect(page.status).toBe(403);
    const html = await page.text();
    expect(html).toMatch(sentence);
    expect(html).not.toContain('value="approve"');
    const approve = await browse(jar, `/oauth/authorize?${query}`, {
      form: { csrf_token: csrfTokenOf(html), decision: "approve" },
    });
    expect(approve.status).toBe(403);
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
    expect(keyForm.status).toBe(taken ? 201 : 403);
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
      expect(consent.status).toBe(303);
      expect(new URL(consent.headers.get("Location") ?? "").searchParams.has("code")).toBe(true);
      expect((await codesOf(app.client_id)).length).toBe(codesBefore + 1);
    } else {
      expect(consent.status).toBe(403);
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
    expect(refused.status).toBe(403);
    expect(refused.headers.get("Location")).toBeNull();
    // An invalid request gets the 403 too, not the page that would say what is wrong with it.
    const invalid = await postForm(jar, "/oauth/authorize?client_id=nobody", { csrf_token: token }, foreign);
    expect(invalid.status).toBe(403);
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
    expect(own.status).toBe(303);
    expect(new URL(own.headers.get("Location") ?? "").searchParams.get("error")).toBe("access_denied");
  });
});
