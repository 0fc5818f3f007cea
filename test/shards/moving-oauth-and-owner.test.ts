import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys, oauthClients, oauthCodes, oauthGrants, oauthTokens, ownerSessions } from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { businessMoving, MOVING_RETRY_AFTER_SECONDS } from "../../src/domain/access/business-moving";
import { SIGN_IN_FAILURE_LIMITS } from "../../src/durable-objects/sign-in-throttle";
import { sha256Hex } from "../../src/lib/secrets";
import { businessWithBookings, move, moved } from "../helpers/business-move";
import { page, post, signedIn, submit } from "../helpers/dashboard";
import { globalDb, shardDb } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import {
  authorizationCode,
  authorizeQuery,
  bodyCredentials,
  browse,
  CookieJar,
  connectApp,
  createOwnerBusiness,
  csrfTokenOf,
  expectOAuthError,
  me,
  postToken,
  refresh,
  registerClient,
  type Tokens,
  validAuthorizationParams,
} from "../helpers/oauth";
import { expectServerErrors } from "../helpers/server-errors";
import { REGIONS, setMoving } from "../helpers/shards";

// While a business moves, OAuth and the owner's sign-in and pages write nothing: their rows are being copied, and a
// write in the shard the copy leaves would be lost or undone by it (docs/scaling.md, Moving a business between
// shards; docs/oauth.md). Each refuses with 503 and Retry-After, and works again once the move has ended.

const MOVING = businessMoving().message;
const RETRY_AFTER = String(MOVING_RETRY_AFTER_SECONDS);

/** RFC 6749's answer of a server that cannot serve now: 503, Retry-After, no-store, `temporarily_unavailable`. */
async function expectOAuthUnavailable(response: Response) {
  await expectOAuthError(response, 503, "temporarily_unavailable");
  expect(response.headers.get("Retry-After")).toBe(RETRY_AFTER);
  expect((await json(response)).error_description).toBe(MOVING);
}

/** The owner's page of a refusal during the move: HTML, 503, Retry-After and the sentence; answers the page. */
async function expectMovingPage(response: Response) {
  await expect(response).toHaveStatus(503);
  expect(response.headers.get("Retry-After")).toBe(RETRY_AFTER);
  expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
  const html = await response.text();
  expect(html).toContain(MOVING);
  return html;
}

const revoke = (token: string, clientId: string) =>
  call("/api/oauth/revoke", { method: "POST", body: { token, client_id: clientId } });

const tokenRow = (shard: ShardName, token: string) =>
  shardDb(shard)
    .select()
    .from(oauthTokens)
    .where(eq(oauthTokens.tokenHash, sha256Hex(token)))
    .get();

describe.each(REGIONS)("a business in %s while it moves", async (shard) => {
  const owner = await createOwnerBusiness({ shard });
  const app = await connectApp(owner);
  const pending = await registerClient();
  const code = await authorizationCode(pending, owner.owner);
  const jar = await signedIn(owner);
  const consentClient = await registerClient();
  const consentQuery = authorizeQuery((await validAuthorizationParams(consentClient)).params);
  const consentCsrf = csrfTokenOf(await (await browse(jar, `/oauth/authorize?${consentQuery}`)).text());
  const approve = () =>
    browse(jar, `/oauth/authorize?${consentQuery}`, { form: { csrf_token: consentCsrf, decision: "approve" } });
  const exchange = () =>
    postToken({
      grant_type: "authorization_code",
      code: code.code,
      redirect_uri: code.redirectUri,
      code_verifier: code.verifier,
      ...bodyCredentials(pending),
    });
  const createKey = () => submit(jar, "/dashboard/keys", "/dashboard/keys", { label: "During the move" });
  const keysOfBusiness = () => shardDb(shard).$count(apiKeys, eq(apiKeys.businessId, owner.business.id));
  const consentGrants = () =>
    shardDb(shard).$count(
      oauthGrants,
      and(eq(oauthGrants.businessId, owner.business.id), eq(oauthGrants.clientId, consentClient.client_id)),
    );

  /** The owner's sign-in form, on the dashboard or on the consent page, posted with the right password. */
  async function signInOn(form: "dashboard" | "consent", browser = new CookieJar()) {
    const [pagePath, action] =
      form === "dashboard"
        ? ["/dashboard/sign-in", "/dashboard/sign-in"]
        : [`/oauth/authorize?${consentQuery}`, `/oauth/authorize/sign-in?${consentQuery}`];
    const csrf = csrfTokenOf(await (await browse(browser, pagePath)).text());
    return post(browser, action, { csrf_token: csrf, email: owner.owner.email, password: owner.owner.password });
  }

  it("refuses the code's exchange, a refresh and a revocation, and stores nothing of them", async () => {
    expectServerErrors();
    await setMoving(owner.business.id, true);
    await expectOAuthUnavailable(await exchange());
    await expectOAuthUnavailable(await refresh(app.client, app.tokens.refresh_token));
    await expectOAuthUnavailable(await revoke(app.tokens.access_token, app.client.client_id));
    const codeRow = await shardDb(shard)
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, sha256Hex(code.code)))
      .get();
    expect(codeRow?.usedAt).toBeNull();
    expect(await tokenRow(shard, app.tokens.refresh_token)).toMatchObject({ rotatedAt: null, revokedAt: null });
    expect(await tokenRow(shard, app.tokens.access_token)).toMatchObject({ revokedAt: null });
    // Reads go on: the access token still answers.
    await expect(await me(app.tokens.access_token)).toHaveStatus(200);
    await setMoving(owner.business.id, false);
  });

  it("refuses the owner's sign-in with the form again, the email kept, and starts no session", async () => {
    expectServerErrors();
    const sessionsBefore = await shardDb(shard).$count(ownerSessions);
    await setMoving(owner.business.id, true);
    for (const form of ["dashboard", "consent"] as const) {
      const browser = new CookieJar();
      const html = await expectMovingPage(await signInOn(form, browser));
      expect(html).toContain(`value="${owner.owner.email}"`);
      expect(html).toContain('name="password"');
      expect(browser.cookies.has("__Host-owner_session")).toBe(false);
    }
    expect(await shardDb(shard).$count(ownerSessions)).toBe(sessionsBefore);
    await setMoving(owner.business.id, false);
  });

  it("does not count sign-ins refused during the move as failed ones: the owner signs in after it", async () => {
    expectServerErrors();
    await setMoving(owner.business.id, true);
    for (let i = 0; i < SIGN_IN_FAILURE_LIMITS.email; i++) {
      await expect(await signInOn("dashboard")).toHaveStatus(503);
    }
    await setMoving(owner.business.id, false);
    await expect(await signInOn("dashboard")).toHaveStatus(303);
  });

  it("refuses the consent's approval and a dashboard form with a page, writing nothing", async () => {
    expectServerErrors();
    const keysBefore = await keysOfBusiness();
    await setMoving(owner.business.id, true);
    const approval = await expectMovingPage(await approve());
    expect(approval).toContain("Please try again in a minute");
    expect(approval).toContain(`href="/oauth/authorize?${consentQuery.replaceAll("&", "&amp;")}"`);
    expect(await consentGrants()).toBe(0);
    const [client] = await globalDb.select().from(oauthClients).where(eq(oauthClients.id, consentClient.client_id));
    expect(client?.firstApprovedAt).toBeNull();
    await expectMovingPage(await createKey());
    expect(await keysOfBusiness()).toBe(keysBefore);
    // The owner's pages still show.
    await expect(await page(jar, "/dashboard")).toHaveStatus(200);
    await setMoving(owner.business.id, false);
  });

  it("takes each of them again once the move has ended", async () => {
    await expect(await exchange()).toHaveStatus(200);
    const refreshed = await refresh(app.client, app.tokens.refresh_token);
    await expect(refreshed).toHaveStatus(200);
    const pair = await json<Tokens>(refreshed);
    await expect(await revoke(pair.access_token, app.client.client_id)).toHaveStatus(200);
    await expect(await me(pair.access_token)).toHaveStatus(401);
    await expect(await signInOn("consent")).toHaveStatus(303);
    await expect(await approve()).toHaveStatus(303);
    expect(await consentGrants()).toBe(1);
    const keysBefore = await keysOfBusiness();
    await expect(await createKey()).toHaveStatus(201);
    expect(await keysOfBusiness()).toBe(keysBefore + 1);
  });
});

describe("a refresh and a revocation across a real move", { timeout: 30_000 }, async () => {
  // Enough rows that the move's first step marks the business and pauses in its copy (docs/scaling.md, Moving a
  // business between shards: a step is bounded).
  const owner = await businessWithBookings(1_200);
  const app = await connectApp(owner);
  const other = await connectApp(owner);
  const current = await json<Tokens>(await refresh(app.client, app.tokens.refresh_token));

  it("refuses both while the move is under way", async () => {
    expect((await json(await move(owner.business.id, "eu1"))).status).toBe("copying");
    expectServerErrors();
    await expectOAuthUnavailable(await refresh(app.client, current.refresh_token));
    await expectOAuthUnavailable(await revoke(other.tokens.access_token, other.client.client_id));
  });

  it("afterwards refuses the token rotated before the move and takes the refused refresh and revocation", async () => {
    await moved(owner.business.id, "eu1");
    // The current pair, found through its forward in eu1, refreshes once.
    const second = await refresh(app.client, current.refresh_token);
    await expect(second).toHaveStatus(200);
    const pair = await json<Tokens>(second);
    await expect(await me(pair.access_token)).toHaveStatus(200);
    expect(await tokenRow("eu1", pair.refresh_token)).toMatchObject({ rotatedAt: null });
    await expect(await refresh(app.client, current.refresh_token)).toHaveStatus(400);
    // The revocation refused during the move takes effect through the forward too.
    await expect(await revoke(other.tokens.access_token, other.client.client_id)).toHaveStatus(200);
    await expect(await me(other.tokens.access_token)).toHaveStatus(401);
    expect((await tokenRow("eu1", other.tokens.refresh_token))?.revokedAt).toEqual(expect.any(String));
    // Rotated out before the move, it is refused after it as used: nothing of the old state came back. Last, since
    // past the reuse grace (however long the move took) it revokes the connection's tokens.
    await expectOAuthError(
      await refresh(app.client, app.tokens.refresh_token),
      400,
      "invalid_grant",
      /^The refresh token was already used/,
    );
  });
});
