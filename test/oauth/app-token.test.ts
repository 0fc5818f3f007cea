import { eq } from "drizzle-orm";
import { afterEach, describe, expect, it, vi } from "vitest";
import { appTokens, oauthGrants } from "../../src/db/schema";
import { disconnectApp } from "../../src/domain/access/app-connections";
import { removeExpiredAppTokens } from "../../src/domain/oauth/app-tokens";
import { sha256Hex } from "../../src/lib/secrets";
import { deps, shardDependencies } from "../helpers/dependencies";
import { createBusiness, globalDb, shardDb } from "../helpers/fixtures";
import { BASE, call, expectError, json } from "../helpers/http";
import {
  bodyCredentials,
  connectClient,
  createOwnerBusiness,
  expectOAuthError,
  type OwnerBusiness,
  postToken,
  type RegisteredClient,
  registerClient,
} from "../helpers/oauth";

// The app as itself (docs/guides/oauth.md, The app as itself): a confidential client's client credentials grant,
// scope app, and the businesses connected to it, read across the shards.

type AppToken = { access_token: string; token_type: string; expires_in: number; scope: string };
type Page = { data: { id: string; handle: string; name: string; connectedAt: string }[]; has_more: boolean };

const appToken = async (client: RegisteredClient, extra: Record<string, string> = {}) => {
  const response = await postToken({ grant_type: "client_credentials", ...bodyCredentials(client), ...extra });
  await expect(response).toHaveStatus(200);
  return json<AppToken>(response);
};

const connections = (token: string, query = "") => call(`/api/v1/app/connections${query}`, { key: token });

afterEach(() => {
  vi.useRealTimers();
});

describe("the client credentials grant", () => {
  it("gives a confidential client an app token of an hour, without a refresh token, its hash kept globally", async () => {
    const client = await registerClient();
    const token = await appToken(client);
    expect(token).toEqual({
      access_token: expect.stringMatching(/^at_app_[A-Za-z0-9_-]{43}$/),
      token_type: "Bearer",
      expires_in: 3600,
      scope: "app",
    });
    const [row] = await globalDb
      .select()
      .from(appTokens)
      .where(eq(appTokens.tokenHash, sha256Hex(token.access_token)));
    expect(row).toMatchObject({ clientId: client.client_id, resource: null, revokedAt: null });
    const bound = await appToken(client, { resource: `${BASE}/api/v1`, scope: "app" });
    const [boundRow] = await globalDb
      .select()
      .from(appTokens)
      .where(eq(appTokens.tokenHash, sha256Hex(bound.access_token)));
    expect(boundRow?.resource).toBe(`${BASE}/api/v1`);
  });

  it("refuses a public client, a wrong secret, another scope and another resource", async () => {
    const client = await registerClient();
    const publicClient = await registerClient({ token_endpoint_auth_method: "none" });
    await expectOAuthError(
      await postToken({ grant_type: "client_credentials", client_id: publicClient.client_id }),
      400,
      "unauthorized_client",
      /public client/,
    );
    await expectOAuthError(
      await postToken({
        grant_type: "client_credentials",
        client_id: client.client_id,
        client_secret: "cs_live_wrong",
      }),
      401,
      "invalid_client",
    );
    await expectOAuthError(
      await postToken({ grant_type: "client_credentials", scope: "api", ...bodyCredentials(client) }),
      400,
      "invalid_scope",
    );
    await expectOAuthError(
      await postToken({
        grant_type: "client_credentials",
        resource: "https://other.example/",
        ...bodyCredentials(client),
      }),
      400,
      "invalid_target",
    );
  });
});

describe("GET /api/v1/app/connections", async () => {
  const client = await registerClient({ client_name: "Booking platform" });
  const shops = [
    await createOwnerBusiness({ name: "Salon in Lisbon", shard: "eu1" }),
    await createOwnerBusiness({ name: "Salon in Austin", shard: "us1" }),
    await createOwnerBusiness({ name: "Salon from before", shard: "legacy" }),
    await createOwnerBusiness({ name: "Salon that leaves", shard: "eu1" }),
  ];
  for (const shop of shops) await connectClient(client, shop);
  const leaving = shops[3] as OwnerBusiness;
  const [grant] = await shardDb("eu1")
    .select()
    .from(oauthGrants)
    .where(eq(oauthGrants.businessId, leaving.business.id));
  await disconnectApp(shardDependencies("eu1"), leaving.business.id, grant?.id ?? 0, { switchActionsOff: false });
  // Another app's connection is not this app's.
  const other = await registerClient();
  await connectClient(other, await createOwnerBusiness({ shard: "us1" }));
  const connected = shops
    .slice(0, 3)
    .map(({ business }) => business.id)
    .sort();

  it("lists the businesses connected now, in every shard, by business id, once each", async () => {
    const { access_token } = await appToken(client);
    const response = await connections(access_token);
    await expect(response).toHaveStatus(200);
    const page = await json<Page>(response);
    expect(page.has_more).toBe(false);
    expect(page.data.map((item) => item.id)).toEqual(connected);
    const austin = page.data.find((item) => item.name === "Salon in Austin");
    expect(austin).toEqual({
      id: shops[1]?.business.id,
      handle: shops[1]?.business.handle,
      name: "Salon in Austin",
      connectedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/),
    });
  });

  it("pages with limit and starting_after", async () => {
    const { access_token } = await appToken(client);
    const first = await json<Page>(await connections(access_token, "?limit=2"));
    expect(first).toMatchObject({ has_more: true });
    expect(first.data.map((item) => item.id)).toEqual(connected.slice(0, 2));
    const second = await json<Page>(await connections(access_token, `?limit=2&starting_after=${connected[1]}`));
    expect(second).toMatchObject({ has_more: false });
    expect(second.data.map((item) => item.id)).toEqual(connected.slice(2));
  });

  it("answers 401 without an app token, a business's credential included, before a 400", async () => {
    const withoutHeader = await call("/api/v1/app/connections?limit=0");
    await expectError(withoutHeader, 401, /An app access token is required/, { code: "authentication_required" });
    expect(withoutHeader.headers.get("WWW-Authenticate")).toContain('resource_metadata="');
    for (const credential of [shops[0]?.apiKey ?? "", "at_app_unknown"]) {
      await expectError(await connections(credential), 401, /needs an app's own access token/, {
        code: "invalid_credential",
      });
    }
    const { access_token } = await appToken(client);
    await expectError(await connections(access_token, "?limit=0"), 400, /limit/, { param: "limit" });
  });

  it("refuses an app token past its hour, and once its client is deleted", async () => {
    const doomed = await registerClient();
    const { access_token } = await appToken(doomed);
    vi.useFakeTimers({ toFake: ["Date"], now: Date.now() + 3_600_000 });
    await expectError(await connections(access_token), 401, /needs an app's own access token/);
    vi.useRealTimers();
    const fresh = await appToken(doomed);
    await expect(await connections(fresh.access_token)).toHaveStatus(200);
    const { registration_access_token } = doomed as RegisteredClient & { registration_access_token: string };
    const deleted = await call(`/api/oauth/register/${doomed.client_id}`, {
      method: "DELETE",
      headers: { Authorization: `Bearer ${registration_access_token}` },
    });
    await expect(deleted).toHaveStatus(204);
    await expectError(await connections(fresh.access_token), 401, /needs an app's own access token/);
  });
});

describe("a page of connections at its maximum", () => {
  it("pages 105 connections across eu1 and us1 by 100, in business id order, each once", async () => {
    const client = await registerClient();
    // One connection in each shard through the flow (which copies the client there), the rest as their rows.
    const first = {
      eu1: await createOwnerBusiness({ shard: "eu1" }),
      us1: await createOwnerBusiness({ shard: "us1" }),
    };
    await connectClient(client, first.eu1);
    await connectClient(client, first.us1);
    const ids = [first.eu1.business.id, first.us1.business.id];
    for (let index = 0; index < 103; index++) {
      const shard = index % 2 === 0 ? "eu1" : "us1";
      const { business } = await createBusiness({ shard });
      await shardDb(shard).insert(oauthGrants).values({
        clientId: client.client_id,
        businessId: business.id,
        scope: "api",
        createdAt: new Date().toISOString(),
      });
      ids.push(business.id);
    }
    const { access_token } = await appToken(client);
    const page = await json<Page>(await connections(access_token, "?limit=100"));
    expect(page.has_more).toBe(true);
    const sorted = [...ids].sort();
    expect(page.data.map((item) => item.id)).toEqual(sorted.slice(0, 100));
    const rest = await json<Page>(await connections(access_token, `?limit=100&starting_after=${sorted[99]}`));
    expect(rest).toMatchObject({ has_more: false });
    expect(rest.data.map((item) => item.id)).toEqual(sorted.slice(100));
    await expectError(await connections(access_token, "?limit=101"), 400, /limit/, { param: "limit" });
  }, 30_000);
});

describe("revoking an app token (RFC 7009)", () => {
  it("ends it at once for its own client; another client's revocation changes nothing", async () => {
    const client = await registerClient();
    const stranger = await registerClient();
    const { access_token } = await appToken(client);
    const revoke = (by: RegisteredClient) =>
      call("/api/oauth/revoke", { method: "POST", body: { token: access_token, ...bodyCredentials(by) } });
    await expect(await revoke(stranger)).toHaveStatus(200);
    await expect(await connections(access_token)).toHaveStatus(200);
    await expect(await revoke(client)).toHaveStatus(200);
    await expectError(await connections(access_token), 401, /needs an app's own access token/);
    const [row] = await globalDb
      .select()
      .from(appTokens)
      .where(eq(appTokens.tokenHash, sha256Hex(access_token)));
    expect(row?.revokedAt).not.toBeNull();
  });
});

describe("the cron's removal of app tokens", () => {
  it("removes app tokens a day past their expiry, and keeps the others", async () => {
    const client = await registerClient();
    const expired = await appToken(client);
    const young = await appToken(client);
    const hashOf = (token: AppToken) => sha256Hex(token.access_token);
    // Issued an hour and a day ago, so expired a day ago.
    await globalDb
      .update(appTokens)
      .set({ expiresAt: new Date(Date.now() - 24 * 3_600_000 - 1000).toISOString() })
      .where(eq(appTokens.tokenHash, hashOf(expired)));
    const removed = await removeExpiredAppTokens(deps);
    expect(removed).toBeGreaterThanOrEqual(1);
    const left = await globalDb.select().from(appTokens).where(eq(appTokens.clientId, client.client_id));
    expect(left.map((row) => row.tokenHash)).toEqual([hashOf(young)]);
  });
});
