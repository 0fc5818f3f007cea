import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oauthGrants, oauthTokens } from "../src/db/schema";
import { disconnectApp } from "../src/domain/access/app-connections";
import { REFRESH_GRACE_MS, tokenRequest } from "../src/domain/oauth/tokens";
import { OAuthError } from "../src/lib/oauth-errors";
import { sha256Hex } from "../src/lib/secrets";
import { db } from "./helpers/fixtures";
import { json } from "./helpers/http";
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
} from "./helpers/oauth";

const shop = await createOwnerBusiness();

const refreshed = async (client: RegisteredClient, refreshToken: string) => {
  const response = await refresh(client, refreshToken);
  expect(response.status, await response.clone().text()).toBe(200);
  return json<Tokens>(response);
};

const tokenRow = (token: string) =>
  db
    .select()
    .from(oauthTokens)
    .where(eq(oauthTokens.tokenHash, sha256Hex(token)))
    .get();

/** The refresh at the domain level, where the clock is a parameter (the HTTP route always uses Date.now()). */
const refreshAt = (client: RegisteredClient, refreshToken: string, now: number) =>
  tokenRequest(
    db,
    undefined,
    new URLSearchParams({
      grant_type: "refresh_token",
      refresh_token: refreshToken,
      ...(bodyCredentials(client) as Record<string, string>),
    }),
    now,
  );

async function expectAllRefused(client: RegisteredClient, pairs: Tokens[]) {
  for (const pair of pairs) {
    expect((await me(pair.access_token)).status).toBe(401);
    await expectOAuthError(await refresh(client, pair.refresh_token), 400, "invalid_grant");
  }
}

describe("refresh grace (DESIGN.md, Refresh grace: 60 seconds after a rotation)", () => {
  it("gives both of two simultaneous refreshes with one token a working pair; the connection stays alive", async () => {
    const { client, tokens, grantId } = await connectApp(shop);
    const responses = await Promise.all([refresh(client, tokens.refresh_token), refresh(client, tokens.refresh_token)]);
    expect(responses.map((response) => response.status)).toEqual([200, 200]);
    const [first, second] = await Promise.all(responses.map((response) => json<Tokens>(response)));
    if (!first || !second) throw new Error("two pairs expected");
    expect(new Set([first.access_token, second.access_token, first.refresh_token, second.refresh_token]).size).toBe(4);
    for (const pair of [first, second]) expect((await me(pair.access_token)).status).toBe(200);
    // Either worker's refresh token keeps working: they are siblings, not one the other's rotated-out token.
    for (const pair of [first, second]) {
      const next = await refreshed(client, pair.refresh_token);
      expect((await me(next.access_token)).status).toBe(200);
    }
    const grant = await db.select().from(oauthGrants).where(eq(oauthGrants.id, grantId)).get();
    expect(grant?.revokedAt).toBeNull();
  });

  it("gives a token rotated out 59 seconds ago a sibling pair in the same family; its successor keeps working", async () => {
    const { client, tokens } = await connectApp(shop);
    const successor = await refreshed(client, tokens.refresh_token);
    await setRotatedAgo(tokens.refresh_token, 59_000);
    const sibling = await refreshed(client, tokens.refresh_token);
    for (const pair of [successor, sibling]) expect((await me(pair.access_token)).status).toBe(200);
    const [original, grace] = [await tokenRow(tokens.refresh_token), await tokenRow(sibling.refresh_token)];
    expect({ grantId: grace?.grantId, codeHash: grace?.codeHash }).toEqual({
      grantId: original?.grantId,
      codeHash: original?.codeHash,
    });
    expect(grace?.rotatedAt).toBeNull();
    for (const pair of [successor, sibling]) expect((await refresh(client, pair.refresh_token)).status).toBe(200);
  });

  it("revokes every token of the connection, grace pairs included, when the token comes back 61 seconds later", async () => {
    const { client, tokens } = await connectApp(shop);
    const successor = await refreshed(client, tokens.refresh_token);
    const sibling = await refreshed(client, tokens.refresh_token);
    await setRotatedAgo(tokens.refresh_token, 61_000);
    await expectOAuthError(
      await refresh(client, tokens.refresh_token),
      400,
      "invalid_grant",
      /already used; every token of this connection is revoked/,
    );
    await expectAllRefused(client, [tokens, successor, sibling]);
  });

  it("ends the window at exactly 60 seconds after the rotation (the clock as a parameter)", async () => {
    const { client, tokens } = await connectApp(shop);
    const rotation = Date.now();
    const successor = await refreshAt(client, tokens.refresh_token, rotation);
    const last = await refreshAt(client, tokens.refresh_token, rotation + REFRESH_GRACE_MS - 1);
    const caught = await refreshAt(client, tokens.refresh_token, rotation + REFRESH_GRACE_MS).catch(
      (error: unknown) => error,
    );
    expect(caught).toBeInstanceOf(OAuthError);
    expect((caught as OAuthError).error).toBe("invalid_grant");
    await expectAllRefused(client, [successor, last]);
  });

  it("answers any number of uses within the window, which counts from the rotation and never moves", async () => {
    const { client, tokens } = await connectApp(shop);
    const successor = await refreshed(client, tokens.refresh_token);
    const rotatedAt = (await tokenRow(tokens.refresh_token))?.rotatedAt;
    const siblings: Tokens[] = [];
    for (let i = 0; i < 3; i++) siblings.push(await refreshed(client, tokens.refresh_token));
    expect(new Set(siblings.map((pair) => pair.refresh_token)).size).toBe(3);
    expect((await tokenRow(tokens.refresh_token))?.rotatedAt).toBe(rotatedAt);
    for (const pair of siblings) expect((await me(pair.access_token)).status).toBe(200);
    await setRotatedAgo(tokens.refresh_token, 61_000);
    await expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant", /already used/);
    await expectAllRefused(client, [successor, ...siblings]);
  });

  it("refuses another client presenting the token within the window, and revokes nothing", async () => {
    const { client, tokens } = await connectApp(shop);
    const successor = await refreshed(client, tokens.refresh_token);
    const other = await registerClient();
    await expectOAuthError(await refresh(other, tokens.refresh_token), 400, "invalid_grant", /not valid/);
    await expectOAuthError(await refresh(other, successor.refresh_token), 400, "invalid_grant", /not valid/);
    expect((await me(successor.access_token)).status).toBe(200);
    expect((await refresh(client, tokens.refresh_token)).status).toBe(200);
    expect((await refresh(client, successor.refresh_token)).status).toBe(200);
  });

  it("gives no grace pair once the connection's tokens are revoked or the owner disconnected the app", async () => {
    const revoked = await connectApp(shop);
    await refreshed(revoked.client, revoked.tokens.refresh_token);
    const revocation = await postToken(
      { token: revoked.tokens.access_token, client_id: revoked.client.client_id },
      { path: "/api/oauth/revoke" },
    );
    expect(revocation.status).toBe(200);
    await expectOAuthError(
      await refresh(revoked.client, revoked.tokens.refresh_token),
      400,
      "invalid_grant",
      /revoked/,
    );

    const disconnected = await connectApp(shop);
    await refreshed(disconnected.client, disconnected.tokens.refresh_token);
    await disconnectApp(db, shop.business.id, disconnected.grantId);
    await expectOAuthError(
      await refresh(disconnected.client, disconnected.tokens.refresh_token),
      400,
      "invalid_grant",
      /disconnected/,
    );
  });
});
