import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oauthClients, oauthCodes, oauthGrants, oauthTokens } from "../../src/db/schema";
import { LEGACY_SHARD, SHARD_NAMES, type ShardName } from "../../src/db/shards";
import { sha256Hex } from "../../src/lib/secrets";
import { page, signedIn, submit } from "../helpers/dashboard";
import { globalDb, shardDb } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import {
  authorizationCode,
  bodyCredentials,
  connectApp,
  createOwnerBusiness,
  expectOAuthError,
  me,
  postToken,
  refresh,
  registerClient,
  type Tokens,
} from "../helpers/oauth";

// The OAuth flow of a business in a regional shard (docs/scaling.md, How a request finds its shard): the client is
// registered and authenticated in the global database; the connection, its codes and its tokens live in the
// business's shard only, and each code and token names that shard.

const otherShards = (shard: ShardName) => SHARD_NAMES.filter((other) => other !== shard);

/** How many rows of `table` match in each database: the business's shard, and every other one. */
async function rowsByShard(count: (shard: ShardName) => Promise<number>) {
  return Object.fromEntries(await Promise.all(SHARD_NAMES.map(async (shard) => [shard, await count(shard)])));
}

const grantRows = (clientId: string) => (shard: ShardName) =>
  shardDb(shard).$count(oauthGrants, eq(oauthGrants.clientId, clientId));
const tokenRows = (token: string) => (shard: ShardName) =>
  shardDb(shard).$count(oauthTokens, eq(oauthTokens.tokenHash, sha256Hex(token)));
const codeRows = (code: string) => (shard: ShardName) =>
  shardDb(shard).$count(oauthCodes, eq(oauthCodes.codeHash, sha256Hex(code)));

/** Only `shard` holds the row(s): one there, none anywhere else. */
const onlyIn = (shard: ShardName) => Object.fromEntries(SHARD_NAMES.map((name) => [name, name === shard ? 1 : 0]));

const revoke = (token: string, clientId: string) =>
  call("/api/oauth/revoke", { method: "POST", body: { token, client_id: clientId } });

describe.each(["eu1", "us1"] as const)("the OAuth flow for a business in %s runs on its shard", async (shard) => {
  const shop = await createOwnerBusiness({ shard });
  const tokenPattern = (prefix: string) => new RegExp(`^${prefix}${shard}_[A-Za-z0-9_-]{43}$`);

  it("registers the client globally; approval marks it there and copies it to the shard with the connection", async () => {
    const client = await registerClient();
    expect(
      await rowsByShard((name) => shardDb(name).$count(oauthClients, eq(oauthClients.id, client.client_id))),
    ).toEqual(onlyIn(LEGACY_SHARD));

    const grant = await authorizationCode(client, shop.owner);
    expect(grant.code).toMatch(tokenPattern("ac_"));
    const global = await globalDb.select().from(oauthClients).where(eq(oauthClients.id, client.client_id)).get();
    const copy = await shardDb(shard).select().from(oauthClients).where(eq(oauthClients.id, client.client_id)).get();
    expect(global?.firstApprovedAt).not.toBeNull();
    expect(copy).toEqual(global);
    expect(await rowsByShard(grantRows(client.client_id))).toEqual(onlyIn(shard));
    expect(await rowsByShard(codeRows(grant.code))).toEqual(onlyIn(shard));
  });

  it("runs the whole flow: code exchange, the API with the token, refresh, revocation, all in the shard", async () => {
    const client = await registerClient();
    const { code, verifier, redirectUri } = await authorizationCode(client, shop.owner);
    const exchanged = await postToken({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      ...bodyCredentials(client),
    });
    await expect(exchanged).toHaveStatus(200);
    const tokens = await json<Tokens>(exchanged);
    expect(tokens.access_token).toMatch(tokenPattern("at_live_"));
    expect(tokens.refresh_token).toMatch(tokenPattern("rt_live_"));
    expect(await rowsByShard(tokenRows(tokens.access_token))).toEqual(onlyIn(shard));
    expect(await rowsByShard(tokenRows(tokens.refresh_token))).toEqual(onlyIn(shard));

    const first = await me(tokens.access_token);
    await expect(first).toHaveStatus(200);
    expect((await json(first)).id).toBe(shop.business.id);

    const refreshed = await refresh(client, tokens.refresh_token);
    await expect(refreshed).toHaveStatus(200);
    const rotated = await json<Tokens>(refreshed);
    expect(rotated.refresh_token).toMatch(tokenPattern("rt_live_"));
    expect(await rowsByShard(tokenRows(rotated.access_token))).toEqual(onlyIn(shard));
    await expectOAuthError(await refresh(client, tokens.refresh_token), 400, "invalid_grant", /already used/);
    await expect(await me(rotated.access_token)).toHaveStatus(200);

    await expect(await revoke(rotated.refresh_token, client.client_id)).toHaveStatus(200);
    await expect(await me(rotated.access_token)).toHaveStatus(401);
    await expectOAuthError(await refresh(client, rotated.refresh_token), 400, "invalid_grant");
  });

  it("refuses a token revoked by the revocation endpoint at the next request", async () => {
    const app = await connectApp(shop);
    await expect(await me(app.tokens.access_token)).toHaveStatus(200);
    await expect(await revoke(app.tokens.access_token, app.client.client_id)).toHaveStatus(200);
    const refused = await me(app.tokens.access_token);
    await expect(refused).toHaveStatus(401);
    expect(refused.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
  });

  it("finds nothing when a code or token is made to name another shard: invalid_grant, and no revocation", async () => {
    const client = await registerClient();
    const { code, verifier, redirectUri } = await authorizationCode(client, shop.owner);
    const moved = (secret: string, prefix: string) =>
      secret.replace(`${prefix}${shard}_`, `${prefix}${otherShards(shard)[1]}_`);
    const form = { grant_type: "authorization_code", redirect_uri: redirectUri, code_verifier: verifier };
    const elsewhere = await postToken({ ...form, code: moved(code, "ac_"), ...bodyCredentials(client) });
    await expectOAuthError(elsewhere, 400, "invalid_grant", /authorization code is not valid/);
    const tokens = await json<Tokens>(await postToken({ ...form, code, ...bodyCredentials(client) }));
    await expectOAuthError(await refresh(client, moved(tokens.refresh_token, "rt_live_")), 400, "invalid_grant");
    await expect(await revoke(moved(tokens.access_token, "at_live_"), client.client_id)).toHaveStatus(200);
    await expect(await me(tokens.access_token)).toHaveStatus(200);
  });

  it("lists and disconnects the app from the owner's dashboard, on the shard", async () => {
    const app = await connectApp(shop);
    const jar = await signedIn(shop);
    const path = `/dashboard/apps/${app.grantId}/disconnect`;
    const apps = (await page(jar, "/dashboard/apps")).html;
    expect(apps).toContain(app.client.client_name);
    expect(apps).toContain(`href="${path}"`);
    await expect(await submit(jar, path, path)).toHaveStatus(303);
    await expect(await me(app.tokens.access_token)).toHaveStatus(401);
    const grant = await shardDb(shard).select().from(oauthGrants).where(eq(oauthGrants.id, app.grantId)).get();
    expect(grant?.revokedAt).not.toBeNull();
    await expectOAuthError(await refresh(app.client, app.tokens.refresh_token), 400, "invalid_grant", /disconnected/);
  });
});

describe("a legacy business's tokens name no shard and keep working", async () => {
  const shop = await createOwnerBusiness({ shard: "legacy" });

  it("issues codes and tokens without a shard, in the legacy database, which refresh and revoke as before", async () => {
    const client = await registerClient();
    const grant = await authorizationCode(client, shop.owner);
    expect(grant.code).toMatch(/^ac_[A-Za-z0-9_-]{43}$/);
    const tokens = await json<Tokens>(
      await postToken({
        grant_type: "authorization_code",
        code: grant.code,
        redirect_uri: grant.redirectUri,
        code_verifier: grant.verifier,
        ...bodyCredentials(client),
      }),
    );
    expect(tokens.access_token).toMatch(/^at_live_[A-Za-z0-9_-]{43}$/);
    expect(await rowsByShard(tokenRows(tokens.access_token))).toEqual(onlyIn(LEGACY_SHARD));
    await expect(await me(tokens.access_token)).toHaveStatus(200);
    const rotated = await json<Tokens>(await refresh(client, tokens.refresh_token));
    expect(rotated.refresh_token).toMatch(/^rt_live_[A-Za-z0-9_-]{43}$/);
    await expect(await revoke(rotated.access_token, client.client_id)).toHaveStatus(200);
    await expect(await me(rotated.access_token)).toHaveStatus(401);
  });
});
