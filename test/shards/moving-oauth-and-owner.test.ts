import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oauthCodes, oauthTokens, ownerSessions } from "../../src/db/schema";
import { sha256Hex } from "../../src/lib/secrets";
import { moved } from "../helpers/business-move";
import { page, post, signedIn, submit } from "../helpers/dashboard";
import { shardDb } from "../helpers/fixtures";
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

const MOVING = /^The business is being moved to another database/;

async function expectOAuthUnavailable(response: Response) {
  expect(response.status).toBe(503);
  expect(response.headers.get("Retry-After")).toBe("30");
  expect(response.headers.get("Cache-Control")).toBe("no-store");
  const body = await json<{ error: string; error_description: string }>(response);
  expect(body.error).toBe("temporarily_unavailable");
  expect(body.error_description).toMatch(MOVING);
}

const revoke = (token: string, clientId: string) =>
  call("/api/oauth/revoke", { method: "POST", body: { token, client_id: clientId } });

const tokenRow = (shard: "eu1" | "us1", token: string) =>
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
  const consent = await validAuthorizationParams(await registerClient());
  const consentQuery = authorizeQuery(consent.params);
  const consentPage = await browse(jar, `/oauth/authorize?${consentQuery}`);
  const consentCsrf = csrfTokenOf(await consentPage.text());
  const exchange = () =>
    postToken({
      grant_type: "authorization_code",
      code: code.code,
      redirect_uri: code.redirectUri,
      code_verifier: code.verifier,
      ...bodyCredentials(pending),
    });

  it("refuses the code's exchange, a refresh and a revocation, and stores nothing of them", async () => {
    expectServerErrors();
    await setMoving(owner.business.id, true, shard);
    await expectOAuthUnavailable(await exchange());
    await expectOAuthUnavailable(await refresh(app.client, app.tokens.refresh_token));
    await expectOAuthUnavailable(await revoke(app.tokens.access_token, app.client.client_id));
    const [codeRow] = await shardDb(shard)
      .select()
      .from(oauthCodes)
      .where(eq(oauthCodes.codeHash, sha256Hex(code.code)));
    expect(codeRow?.usedAt).toBeNull();
    expect(await tokenRow(shard, app.tokens.refresh_token)).toMatchObject({ rotatedAt: null, revokedAt: null });
    // Reads go on: the access token still answers.
    expect((await me(app.tokens.access_token)).status).toBe(200);
    await setMoving(owner.business.id, false, shard);
  });

  it("refuses the owner's sign-in, the consent's approval and a dashboard form with a page, writing nothing", async () => {
    expectServerErrors();
    const sessionsBefore = await shardDb(shard).$count(ownerSessions);
    await setMoving(owner.business.id, true, shard);
    const fresh = new CookieJar();
    const signInPage = await browse(fresh, "/dashboard/sign-in");
    const refused = await post(fresh, "/dashboard/sign-in", {
      csrf_token: csrfTokenOf(await signInPage.text()),
      email: owner.owner.email,
      password: owner.owner.password,
    });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("Retry-After")).toBe("30");
    expect(await refused.text()).toContain("being moved");
    const approval = await browse(jar, `/oauth/authorize?${consentQuery}`, {
      form: { csrf_token: consentCsrf, decision: "approve" },
    });
    expect(approval.status).toBe(503);
    expect((await submit(jar, "/dashboard/keys", "/dashboard/keys", { label: "During the move" })).status).toBe(503);
    expect(await shardDb(shard).$count(ownerSessions)).toBe(sessionsBefore);
    // The owner's pages still show.
    expect((await page(jar, "/dashboard")).status).toBe(200);
    await setMoving(owner.business.id, false, shard);
  });

  it("takes each of them again once the move has ended", async () => {
    expect((await exchange()).status).toBe(200);
    const refreshed = await refresh(app.client, app.tokens.refresh_token);
    expect(refreshed.status).toBe(200);
    const pair = await json<Tokens>(refreshed);
    expect((await revoke(pair.access_token, app.client.client_id)).status).toBe(200);
    expect((await me(pair.access_token)).status).toBe(401);
    await signedIn(owner);
    const approved = await browse(jar, `/oauth/authorize?${consentQuery}`, {
      form: { csrf_token: consentCsrf, decision: "approve" },
    });
    expect(approved.status).toBe(303);
  });
});

describe("a refresh across a real move", () => {
  it("is refused during it, and afterwards the rotated-out token stays refused while the current pair works", async () => {
    const owner = await createOwnerBusiness({ shard: "us1" });
    const app = await connectApp(owner);
    const first = await json<Tokens>(await refresh(app.client, app.tokens.refresh_token));
    await moved(owner.business.id, "eu1");

    // The token rotated out before the move is refused after it, as reuse: nothing of the old state came back.
    const reused = await refresh(app.client, app.tokens.refresh_token);
    expect(reused.status).toBe(400);
    expect((await json(reused)).error).toBe("invalid_grant");
    // The current pair, found through its forward in eu1, refreshes once.
    const second = await refresh(app.client, first.refresh_token);
    expect(second.status).toBe(200);
    const pair = await json<Tokens>(second);
    expect((await me(pair.access_token)).status).toBe(200);
    expect((await refresh(app.client, first.refresh_token)).status).toBe(400);
    expect(await tokenRow("eu1", pair.refresh_token)).toMatchObject({ rotatedAt: null });
  });
});
