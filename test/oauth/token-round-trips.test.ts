import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { type ShardBindings, shardBinding } from "../../src/db/shard-bindings";
import { SHARD_NAMES, SHARDS, type ShardName, shardSegment } from "../../src/db/shards";
import { moved } from "../helpers/business-move";
import { countingD1 } from "../helpers/counting-d1";
import { BASE, dispatch, json } from "../helpers/http";
import {
  authorizationCode,
  authorizeQuery,
  bodyCredentials,
  connectApp,
  createOwnerBusiness,
  expectOAuthError,
  type RegisteredClient,
  registerClient,
  type Tokens,
} from "../helpers/oauth";

// docs/oauth.md, Decisions; docs/scaling.md, How a request finds its shard: a token request works on the shard its code
// or refresh token names, and makes at most two D1 round trips in all: the client's copy there read in one batch with
// the code or token, then the grant's batch; none in any other database.

/** A token request on bindings that count each database's round trips apart: the answer and each database's trips. */
async function tokenRequestTrips(form: Record<string, string | undefined>) {
  const counted = SHARD_NAMES.map((shard) => ({ shard, ...countingD1(shardBinding(env, shard)) }));
  const bindings = Object.fromEntries(counted.map(({ shard, d1 }) => [SHARDS[shard].binding, d1])) as ShardBindings;
  const request = new Request(`${BASE}/api/oauth/token`, {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: authorizeQuery(form),
  });
  const response = await dispatch(request, bindings);
  const trips = Object.fromEntries(counted.map(({ shard, trips }) => [shard, trips.length])) as Record<
    ShardName,
    number
  >;
  const total = Object.values(trips).reduce((sum, count) => sum + count, 0);
  return { response, trips, total };
}

/** The trips expected of each database: `inShard` in the business's shard, `inGlobal` in the global (legacy) one. */
function expected(shard: ShardName, inShard: number, inGlobal = 0) {
  const trips = Object.fromEntries(SHARD_NAMES.map((name) => [name, 0])) as Record<ShardName, number>;
  trips[shard] += inShard;
  trips.legacy += inGlobal;
  return trips;
}

describe.each(["legacy", "eu1", "us1"] as const)(
  "D1 round trips of the token endpoint, for a business in %s",
  async (shard) => {
    const shop = await createOwnerBusiness({ shard });
    const madeUpCode = `ac_${shardSegment(shard)}${"x".repeat(43)}`;
    let client: RegisteredClient;
    let tokens: Tokens;

    it("exchanges a code in two round trips in all, both in the shard: client and code, then the batch", async () => {
      client = await registerClient();
      const grant = await authorizationCode(client, shop.owner);
      const exchange = await tokenRequestTrips({
        grant_type: "authorization_code",
        code: grant.code,
        redirect_uri: grant.redirectUri,
        code_verifier: grant.verifier,
        ...bodyCredentials(client),
      });
      await expect(exchange.response).toHaveStatus(200);
      expect(exchange.total).toBeLessThanOrEqual(2);
      expect(exchange.trips).toEqual(expected(shard, 2));
      tokens = await json<Tokens>(exchange.response);
    });

    it("refreshes in two round trips in all, both in the shard: client and token, then the batch", async () => {
      const rotation = await tokenRequestTrips({
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        ...bodyCredentials(client),
      });
      await expect(rotation.response).toHaveStatus(200);
      expect(rotation.total).toBeLessThanOrEqual(2);
      expect(rotation.trips).toEqual(expected(shard, 2));
    });

    it("refuses a wrong secret with a live refresh token (invalid_client) after one round trip", async () => {
      const refused = await tokenRequestTrips({
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token,
        ...bodyCredentials(client),
        client_secret: "cs_live_not-the-secret",
      });
      await expectOAuthError(refused.response, 401, "invalid_client", /secret is not correct/);
      expect(refused.trips).toEqual(expected(shard, 1));
    });

    // A client without a copy in the shard has no connection there: it is looked for in the global database only to
    // answer as RFC 6749 §5.2 does, still within two round trips.
    const globalOnly = shard === "legacy" ? 0 : 1;

    it("refuses an unknown client with a made-up code as invalid_client, within two round trips", async () => {
      const refused = await tokenRequestTrips({
        grant_type: "authorization_code",
        code: madeUpCode,
        redirect_uri: client.redirect_uris[0],
        code_verifier: "v".repeat(43),
        client_id: "cl_nobodynobodynobody00",
        client_secret: "cs_live_nothing",
      });
      await expectOAuthError(refused.response, 401, "invalid_client", /No client is registered/);
      expect(refused.trips).toEqual(expected(shard, 1, globalOnly));
    });

    it("refuses a registered client that no owner approved, with a made-up code, as invalid_grant", async () => {
      const stranger = await registerClient();
      const refused = await tokenRequestTrips({
        grant_type: "authorization_code",
        code: madeUpCode,
        redirect_uri: stranger.redirect_uris[0],
        code_verifier: "v".repeat(43),
        ...bodyCredentials(stranger),
      });
      await expectOAuthError(refused.response, 400, "invalid_grant", /authorization code is not valid/);
      expect(refused.trips).toEqual(expected(shard, 1, globalOnly));
    });

    it("refuses another client's refresh token as invalid_grant, and its wrong secret as invalid_client", async () => {
      const stranger = await registerClient();
      const form = { grant_type: "refresh_token", refresh_token: tokens.refresh_token, ...bodyCredentials(stranger) };
      const refused = await tokenRequestTrips(form);
      await expectOAuthError(refused.response, 400, "invalid_grant", /refresh token is not valid/);
      expect(refused.trips).toEqual(expected(shard, 1, globalOnly));
      const wrongSecret = await tokenRequestTrips({ ...form, client_secret: "cs_live_not-the-secret" });
      await expectOAuthError(wrongSecret.response, 401, "invalid_client", /secret is not correct/);
      expect(wrongSecret.trips).toEqual(expected(shard, 1, globalOnly));
    });
  },
);

// docs/scaling.md, Moving a business between shards: a refresh token whose business moved is found through the
// forward left in each shard the business left, a forward's read and the token's read per hop.
describe("D1 round trips of a refresh whose business moved", () => {
  const refresh = (app: Awaited<ReturnType<typeof connectApp>>, token: string) =>
    tokenRequestTrips({ grant_type: "refresh_token", refresh_token: token, ...bodyCredentials(app.client) });

  it("costs two round trips where the token is named and two where its business is, after one move", async () => {
    const shop = await createOwnerBusiness({ shard: "us1" });
    const app = await connectApp(shop);
    await moved(shop.business.id, "eu1");
    const { response, trips } = await refresh(app, app.tokens.refresh_token);
    await expect(response).toHaveStatus(200);
    expect(trips).toEqual({ legacy: 0, eu1: 2, us1: 2, sandbox: 0 });
    const rotated = await json<Tokens>(response);
    await moved(shop.business.id, "legacy");
    // The new pair names eu1, which the business left too: one hop.
    const again = await refresh(app, rotated.refresh_token);
    await expect(again.response).toHaveStatus(200);
    expect(again.trips).toEqual({ legacy: 2, eu1: 2, us1: 0, sandbox: 0 });
  });

  it("and two more per shard it passed through, after two moves", async () => {
    const shop = await createOwnerBusiness({ shard: "us1" });
    const app = await connectApp(shop);
    await moved(shop.business.id, "eu1");
    await moved(shop.business.id, "legacy");
    const { response, trips } = await refresh(app, app.tokens.refresh_token);
    await expect(response).toHaveStatus(200);
    expect(trips).toEqual({ legacy: 2, eu1: 2, us1: 2, sandbox: 0 });
  });
});
