import { describe, expect, it } from "vitest";
import { codesOf, expectErrorPage, requestAuthorization } from "../helpers/authorize";
import { call } from "../helpers/http";
import {
  authorizeQuery,
  browse,
  CookieJar,
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
    await expectErrorPage((await requestAuthorization(client, overrides)).response, sentence);
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
      (await requestAuthorization(native, { redirect_uri: uri })).response,
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
    const { response } = await requestAuthorization(phishing, overrides);
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
    const { response } = await requestAuthorization(client, { scope: undefined });
    await expect(response).toHaveStatus(200);
  });
});
