import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oauthGrants, oauthTokens } from "../../src/db/schema";
import { disconnectApp } from "../../src/domain/access/app-connections";
import { REUSE_REVOKES_AFTER_MS } from "../../src/domain/oauth/refresh-rotation";
import { tokenRequest } from "../../src/domain/oauth/tokens";
import { OAuthError } from "../../src/lib/oauth-errors";
import { sha256Hex } from "../../src/lib/secrets";
import { deps } from "../helpers/dependencies";
import { db } from "../helpers/fixtures";
import { json } from "../helpers/http";
import {
  bodyCredentials,
  connectApp,
  createOwnerBusiness,
  expectOAuthError,
  me,
  postToken,
  type RegisteredClient,
  refresh,
  registerClient,
  setRotatedAgo,
  type Tokens,
  testBudget,
} from "../helpers/oauth";

const shop = await createOwnerBusiness();

const refreshed = async (client: RegisteredClient, refreshToken: string) => {
  const response = await refresh(client, refreshToken);
  await expect(response).toHaveStatus(200);
  return json<Tokens>(response);
};

const tokenRow = (token: string) =>
  db
    .select()
    .from(oauthTokens)
    .where(eq(oauthTokens.tokenHash, sha256Hex(token)))
    .get();

/** Every token of the connection, live or not: one pair per code or refresh token that gave one. */
const tokensOf = (grantId: number) => db.$count(oauthTokens, eq(oauthTokens.grantId, grantId));

const grantRevokedAt = async (grantId: number) =>
  (await db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId)).get())?.revokedAt;

/** The refresh at the domain level, where the clock is a parameter (the HTTP route always uses Date.now()). */
const refreshAt = (client: RegisteredClient, refreshToken: string, now: number) =>
  tokenRequest(
    deps,
    testBudget(),
    undefined,
    new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      ...(bodyCredentials(client) as Record<string, string>),
    }),
    now,
  ).catch((error: unknown) => error);

function expectInvalidGrant(caught: unknown, description: RegExp) {
  expect(caught).toBeInstanceOf(OAuthError);
  expect({ error: (caught as OAuthError).error, description: (caught as OAuthError).description }).toEqual({
    error: "invalid_grant",
    description: expect.stringMatching(description),
  });
}

async function expectWorking(client: RegisteredClient, pair: Tokens) {
  await expect(await me(pair.access_token)).toHaveStatus(200);
  return refreshed(client, pair.refresh_token);
}

async function expectAllRefused(client: RegisteredClient, pairs: Tokens[]) {
  for (const pair of pairs) {
    await expect(await me(pair.access_token)).toHaveStatus(401);
    await expectOAuthError(await refresh(client, pair.refresh_token), 400, "invalid_grant");
  }
}

const USED = /already used: refresh with the one that replaced it/;
const REVOKED_ALL = /already used; every token of this connection is revoked/;

describe("one pair per refresh token (docs/oauth.md, Refresh; RFC 9700 §4.14.2 from 5 seconds on)", () => {
  it("refuses a used refresh token at once, every time; the pair it gave keeps working and nothing is revoked", async () => {
    const { client, tokens, grantId } = await connectApp(shop);
    const successor = await refreshed(client, tokens.refresh_token);
    for (let i = 0; i < 3; i++) {
      await expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant", USED);
    }
    // The code's pair and the one refresh's pair: the refusals issued nothing.
    expect(await tokensOf(grantId)).toBe(4);
    await expect(await me(tokens.access_token)).toHaveStatus(200);
    await expectWorking(client, successor);
    expect(await grantRevokedAt(grantId)).toBeNull();
  });

  it.each([2, 5])(
    "gives exactly one of %i simultaneous refreshes with one token a pair; the others get invalid_grant and revoke nothing",
    async (count) => {
      const { client, tokens, grantId } = await connectApp(shop);
      const responses = await Promise.all(Array.from({ length: count }, () => refresh(client, tokens.refresh_token)));
      const statuses = responses.map((response) => response.status);
      expect(statuses.filter((status) => status === 200)).toHaveLength(1);
      expect(statuses.filter((status) => status === 400)).toHaveLength(count - 1);
      for (const loser of responses.filter((response) => response.status === 400)) {
        // Refused inside the batch (it read the token unused) or at the read (it read it used): invalid_grant both.
        await expectOAuthError(loser, 400, "invalid_grant", /already used: refresh with|at the same time/);
      }
      expect(await tokensOf(grantId)).toBe(4);
      const winner = await json<Tokens>(responses.find((response) => response.status === 200) as Response);
      const next = await expectWorking(client, winner);
      await expect(await me(next.access_token)).toHaveStatus(200);
      expect(await grantRevokedAt(grantId)).toBeNull();
    },
  );

  it("revokes every token of the connection, not the connection, when the used token comes back 6 seconds after its rotation", async () => {
    const { client, tokens, grantId } = await connectApp(shop);
    const successor = await refreshed(client, tokens.refresh_token);
    const third = await refreshed(client, successor.refresh_token);
    await setRotatedAgo(tokens.refresh_token, 6_000);
    await expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant", REVOKED_ALL);
    await expectAllRefused(client, [tokens, successor, third]);
    expect(await grantRevokedAt(grantId)).toBeNull();
  });

  it("draws the line at exactly 5 seconds after the rotation, which refusals never move (the clock as a parameter)", async () => {
    expect(REUSE_REVOKES_AFTER_MS).toBe(5_000);
    const { client, tokens } = await connectApp(shop);
    const rotation = Date.now();
    const successor = await refreshAt(client, tokens.refresh_token, rotation);
    if (successor instanceof Error) throw successor;
    const rotatedAt = (await tokenRow(tokens.refresh_token))?.rotatedAt;
    // A network retry of the same request: refused, and the pair it gave still works.
    for (const after of [0, 1, 4_900, REUSE_REVOKES_AFTER_MS - 1]) {
      expectInvalidGrant(await refreshAt(client, tokens.refresh_token, rotation + after), USED);
    }
    expect((await tokenRow(tokens.refresh_token))?.rotatedAt).toBe(rotatedAt);
    await expect(await me((successor as Tokens).access_token)).toHaveStatus(200);
    expect((await tokenRow((successor as Tokens).refresh_token))?.revokedAt).toBeNull();
    expectInvalidGrant(await refreshAt(client, tokens.refresh_token, rotation + REUSE_REVOKES_AFTER_MS), REVOKED_ALL);
    await expectAllRefused(client, [successor as Tokens]);
  });

  it("refuses another client presenting the token, used or not, and revokes nothing", async () => {
    const { client, tokens } = await connectApp(shop);
    const successor = await refreshed(client, tokens.refresh_token);
    await setRotatedAgo(tokens.refresh_token, 6_000);
    const other = await registerClient();
    await expectOAuthError(await refresh(other, tokens.refresh_token), 400, "invalid_grant", /not valid/);
    await expectOAuthError(await refresh(other, successor.refresh_token), 400, "invalid_grant", /not valid/);
    await expectWorking(client, successor);
  });

  it("refuses a used token as revoked once the connection's tokens are revoked, or the owner disconnected the app", async () => {
    const revoked = await connectApp(shop);
    await refreshed(revoked.client, revoked.tokens.refresh_token);
    const revocation = await postToken(
      { token: revoked.tokens.access_token, client_id: revoked.client.client_id },
      { path: "/api/oauth/revoke" },
    );
    await expect(revocation).toHaveStatus(200);
    await expectOAuthError(
      await refresh(revoked.client, revoked.tokens.refresh_token),
      400,
      "invalid_grant",
      /revoked; authorize again/,
    );

    const disconnected = await connectApp(shop);
    await refreshed(disconnected.client, disconnected.tokens.refresh_token);
    await disconnectApp(deps, shop.business.id, disconnected.grantId);
    await expectOAuthError(
      await refresh(disconnected.client, disconnected.tokens.refresh_token),
      400,
      "invalid_grant",
      /disconnected/,
    );
  });
});
