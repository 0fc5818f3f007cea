import { env } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oauthClients, oauthGrants } from "../../src/db/schema";
import {
  CLIENT_CLEANUP_LIMIT,
  removeUnapprovedClients,
  UNAPPROVED_CLIENT_LIFETIME_MS,
  unapprovedClientsRemoval,
} from "../../src/domain/oauth/client-cleanup";
import { deps } from "../helpers/dependencies";
import { db, globalDb, legacyDb } from "../helpers/fixtures";
import { call } from "../helpers/http";
import {
  authorizeQuery,
  createOwnerBusiness,
  decide,
  expectOAuthError,
  postToken,
  type RegisteredClient,
  registerClient,
  validAuthorizationParams,
} from "../helpers/oauth";
import { queryPlan } from "../helpers/query-plan";

/**
 * docs/architecture.md, OAuth: clients never approved within 24 hours are removed, by the cron in bounded chunks. The
 * removal runs with the real clock over the shared database, so each test ages only the clients it registered
 * (their `created_at`), and never moves the clock past other tests' clients.
 */

const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
const ownerBusiness = await createOwnerBusiness();

const registeredAgo = async (client: RegisteredClient, ms: number) => {
  await globalDb
    .update(oauthClients)
    .set({ createdAt: new Date(Date.now() - ms).toISOString() })
    .where(eq(oauthClients.id, client.client_id));
};
const stored = async (clients: RegisteredClient[]) =>
  (
    await globalDb
      .select({ id: oauthClients.id })
      .from(oauthClients)
      .where(
        inArray(
          oauthClients.id,
          clients.map((client) => client.client_id),
        ),
      )
  ).map((row) => row.id);
const authorizationPage = async (client: RegisteredClient) =>
  call(`/oauth/authorize?${authorizeQuery((await validAuthorizationParams(client)).params)}`);

describe("clients no owner approved within 24 hours are removed (docs/architecture.md, OAuth)", () => {
  it("removes such a client: its authorization link and its token requests stop working", async () => {
    const unused = await registerClient();
    await expect(await authorizationPage(unused)).toHaveStatus(200);
    await registeredAgo(unused, UNAPPROVED_CLIENT_LIFETIME_MS + 60_000);
    await removeUnapprovedClients(deps);
    expect(await stored([unused])).toEqual([]);
    const page = await authorizationPage(unused);
    await expect(page).toHaveStatus(400);
    expect(await page.text()).toContain("No app is registered with this client_id.");
    await expectOAuthError(
      await postToken({
        grant_type: "refresh_token",
        refresh_token: "rt_live_x",
        client_id: unused.client_id,
        client_secret: unused.client_secret,
      }),
      401,
      "invalid_client",
    );
  });

  it("removes an unapproved client the moment it is over 24 hours old, by the clock the run is given", async () => {
    const client = await registerClient();
    // A registration time of this test's own, long before any other test's clients; the 24 hours written out, as
    // docs/guides/oauth.md states them.
    const registeredAt = Date.parse("2001-02-03T04:05:06.000Z");
    await globalDb
      .update(oauthClients)
      .set({ createdAt: new Date(registeredAt).toISOString() })
      .where(eq(oauthClients.id, client.client_id));
    await removeUnapprovedClients(deps, registeredAt + DAY);
    expect(await stored([client])).toEqual([client.client_id]);
    await expect(await authorizationPage(client)).toHaveStatus(200);
    await removeUnapprovedClients(deps, registeredAt + DAY + 1);
    expect(await stored([client])).toEqual([]);
    await expect(await authorizationPage(client)).toHaveStatus(400);
  });

  it("keeps a client younger than 24 hours, and one approved once, even after its connection is gone", async () => {
    const young = await registerClient();
    const approved = await registerClient();
    const approve = async () => {
      const { params } = await validAuthorizationParams(approved);
      expect((await decide(authorizeQuery(params), ownerBusiness.owner, "approve")).searchParams.has("code")).toBe(
        true,
      );
      return (await globalDb.select().from(oauthClients).where(eq(oauthClients.id, approved.client_id)))[0]
        ?.firstApprovedAt;
    };
    const before = Date.now();
    const firstApproval = await approve();
    expect(Date.parse(firstApproval ?? "")).toBeGreaterThanOrEqual(before);
    // Recorded once: a later approval keeps the first one's time.
    expect(await approve()).toBe(firstApproval);
    // Its connection gone (as with a business deleted): it was approved all the same.
    await db.delete(oauthGrants).where(eq(oauthGrants.clientId, approved.client_id));
    await registeredAgo(young, UNAPPROVED_CLIENT_LIFETIME_MS - HOUR);
    await registeredAgo(approved, UNAPPROVED_CLIENT_LIFETIME_MS + DAY);
    await removeUnapprovedClients(deps);
    expect((await stored([young, approved])).sort()).toEqual([young.client_id, approved.client_id].sort());
    await expect(await authorizationPage(young)).toHaveStatus(200);
    await expect(await authorizationPage(approved)).toHaveStatus(200);
  });

  it("removes in bounded chunks, oldest first; the next run takes the rest", async () => {
    const clients = [await registerClient(), await registerClient(), await registerClient()];
    // Older than any other test's clients, so these are the first candidates.
    for (const [i, client] of clients.entries()) {
      await globalDb
        .update(oauthClients)
        .set({ createdAt: `1990-01-0${i + 1}T00:00:00.000Z` })
        .where(eq(oauthClients.id, client.client_id));
    }
    expect(await removeUnapprovedClients(deps, Date.now(), 2)).toBe(2);
    expect(await stored(clients)).toEqual([clients[2]?.client_id]);
    expect(await removeUnapprovedClients(deps, Date.now(), 1)).toBe(1);
    expect(await stored(clients)).toEqual([]);
  });

  it("finds its candidates by a range scan of the index of unapproved clients", async () => {
    const { sql, params } = unapprovedClientsRemoval(deps, Date.now(), CLIENT_CLEANUP_LIMIT).toSQL();
    const details = await queryPlan(env.DB, sql, params);
    expect(details).toContain("SEARCH oauth_clients USING INDEX oauth_clients_unapproved (created_at<?)");
    expect(details.filter((detail) => /SCAN oauth_clients\b/.test(detail))).toEqual([]);
  });

  it("the migration marks clients connected before it as approved, so the first run keeps them", async () => {
    // Before sharding, one database held the clients and the grants: a business of the legacy shard.
    const legacy = await createOwnerBusiness({ shard: "legacy" });
    const connected = await registerClient();
    const { params } = await validAuthorizationParams(connected);
    await decide(authorizeQuery(params), legacy.owner, "approve");
    // As before the migration: a connection, and no first approval recorded.
    await globalDb.update(oauthClients).set({ firstApprovedAt: null }).where(eq(oauthClients.id, connected.client_id));
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0003_oauth_clients_first_approval"));
    const backfill = migration?.queries.find((query) => query.includes("UPDATE"));
    if (!backfill) throw new Error("the migration's backfill is missing");
    await env.DB.prepare(backfill).run();
    const [grant] = await legacyDb.select().from(oauthGrants).where(eq(oauthGrants.clientId, connected.client_id));
    const [client] = await globalDb.select().from(oauthClients).where(eq(oauthClients.id, connected.client_id));
    expect(client?.firstApprovedAt).toBe(grant?.createdAt);
    await registeredAgo(connected, UNAPPROVED_CLIENT_LIFETIME_MS + DAY);
    await removeUnapprovedClients(deps);
    expect(await stored([connected])).toEqual([connected.client_id]);
  });
});
