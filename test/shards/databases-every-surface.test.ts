import { env } from "cloudflare:test";
import { eq, getTableName } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import {
  appEndpoints,
  appTokens,
  businessMoves,
  businessShards,
  intakeResponses,
  oauthClients,
  ownerEmails,
} from "../../src/db/schema";
import type { ShardName } from "../../src/db/shards";
import { switchAction } from "../../src/domain/actions/owner-decisions";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { registerAction } from "../helpers/actions";
import { page, signedIn, submit } from "../helpers/dashboard";
import { shardDependencies } from "../helpers/dependencies";
import { createApiKey } from "../helpers/fixtures";
import { around, call, RUNTIME } from "../helpers/http";
import { createIntake, runtimeIntake } from "../helpers/intakes";
import { connectApp, createOwnerBusiness, postToken, refresh } from "../helpers/oauth";
import { bookingObject, reportChange } from "../helpers/platform";
import { receiverBox } from "../helpers/receiver";
import { recordingDatabases, tablesOf } from "../helpers/recording-databases";
import { REGIONS, shardsHolding } from "../helpers/shards";
import { subscribe } from "../helpers/webhooks";

/*
 * docs/scaling.md, How a request finds its shard: every surface (the owner's pages, the runtime API, OAuth) works on
 * the shard of its business and reads the global database for the global tables only. The legacy database is also
 * the global one, so a request that picked the wrong database would show here as a query of a business table on it,
 * or any query on the other regional shard.
 */

const GLOBAL_TABLES: string[] = [businessShards, businessMoves, ownerEmails, oauthClients, appEndpoints, appTokens].map(
  getTableName,
);

/** Runs `work` with every database of its requests recording what it runs, through the test's real helpers. */
async function recorded(work: () => Promise<unknown>) {
  const { bindings, seen } = recordingDatabases(env);
  await around(bindings, work);
  return seen;
}

/** No query on the other regional shard, none of a business table on the legacy database, and some on its own. */
function expectOnlyItsShard(seen: Record<ShardName, string[]>, shard: ShardName, { readsItsShard = true } = {}) {
  for (const other of REGIONS.filter((region) => region !== shard)) {
    expect(seen[other], `the other regional shard, ${other}, was queried`).toEqual([]);
  }
  const strays = seen.legacy.filter((sql) => tablesOf(sql).some((table) => !GLOBAL_TABLES.includes(table)));
  expect(strays, "a business table was queried on the legacy database").toEqual([]);
  if (readsItsShard) expect(seen[shard].length, `nothing was read in ${shard}`).toBeGreaterThan(0);
}

describe.each(REGIONS)("every surface of a business in %s uses its shard", async (shard) => {
  const owner = await createOwnerBusiness({ shard });
  const { business, apiKey } = owner;
  const action = await registerAction(apiKey, "stock_everywhere", { url: receiverBox("everywhere").url("/ok") });
  await switchAction(shardDependencies(shard), business.id, action.id, true);
  const endpoint = await subscribe(apiKey, receiverBox("every-surface").url("/ok"));
  const intake = await createIntake(apiKey);
  const app = await connectApp(owner);
  const { apiKeyId: secondKey } = await createApiKey(business.id, { shard });
  const jar = await signedIn(owner);

  const pages = [
    "/dashboard",
    "/dashboard/actions",
    `/dashboard/actions/${action.id}`,
    `/dashboard/actions/${action.id}/remove`,
    "/dashboard/apps",
    `/dashboard/apps/${app.grantId}/disconnect`,
    "/dashboard/intakes",
    `/dashboard/intakes/${intake.id}`,
    `/dashboard/intakes/${intake.id}/remove`,
    "/dashboard/keys",
    `/dashboard/keys/${secondKey}/revoke`,
    "/dashboard/knowledge",
    "/dashboard/webhooks",
    `/dashboard/webhooks/${endpoint.id}`,
    `/dashboard/webhooks/${endpoint.id}/remove`,
  ];
  it.each(pages)("the owner's page %s", async (path) => {
    let status = 0;
    const seen = await recorded(async () => {
      status = (await page(jar, path)).status;
    });
    expect(status).toBe(200);
    expectOnlyItsShard(seen, shard);
  });

  const forms: [from: string, action: string, form?: Record<string, string>][] = [
    ["/dashboard/keys", "/dashboard/keys", { label: "Another partner" }],
    [`/dashboard/webhooks/${endpoint.id}`, `/dashboard/webhooks/${endpoint.id}/ping`],
    [`/dashboard/actions/${action.id}`, `/dashboard/actions/${action.id}/off`],
    [`/dashboard/intakes/${intake.id}`, `/dashboard/intakes/${intake.id}/off`],
    [`/dashboard/keys/${secondKey}/revoke`, `/dashboard/keys/${secondKey}/revoke`],
  ];
  it.each(forms)("the owner's form from %s to %s", async (from, to, form) => {
    let status = 0;
    const seen = await recorded(async () => {
      status = (await submit(jar, from, to, form)).status;
    });
    expect(status, to).toBeLessThan(400);
    expectOnlyItsShard(seen, shard);
  });

  it("the owner's sign-in", async () => {
    const seen = await recorded(() => signedIn(owner));
    expectOnlyItsShard(seen, shard);
  });

  it("the runtime API: context, a report, an action call and a plan change", async () => {
    // The owner's form above switched the action off.
    await switchAction(shardDependencies(shard), business.id, action.id, true);
    const statuses: number[] = [];
    const seen = await recorded(async () => {
      const path = `/internal/v1/businesses/${business.id}`;
      statuses.push((await call(`${path}/context?channel=whatsapp`, { headers: RUNTIME })).status);
      statuses.push((await reportChange(business.id, { booking: bookingObject(7_000_000 + statuses.length) })).status);
      statuses.push(
        (
          await call(`${path}/actions/${action.name}/call`, {
            method: "POST",
            headers: RUNTIME,
            body: { conversation_id: "c-every", message_id: "m-every", channel: "whatsapp", arguments: {} },
          })
        ).status,
      );
      statuses.push(
        (await call(`${path}/plan`, { method: "PUT", headers: RUNTIME, body: { plan: "business", active: true } }))
          .status,
      );
    });
    expect(statuses).toEqual([200, 201, 200, 200]);
    expectOnlyItsShard(seen, shard);
  });

  it("the runtime API: an intake conversation, started and completed", async () => {
    await switchIntakeOn(shardDependencies(shard), business.id, intake.id);
    const runtime = runtimeIntake(business);
    const cid = `conv-every-${crypto.randomUUID()}`;
    const statuses: number[] = [];
    const seen = await recorded(async () => {
      statuses.push((await runtime.start(cid, { intake_id: intake.id, channel: "whatsapp" })).status);
      const answered = await runtime.answer(cid, { full_name: "Mo Ali", email: "mo@example.com" });
      statuses.push(answered.status, ((await answered.json()) as { status: string }).status === "completed" ? 1 : 0);
    });
    expect(statuses).toEqual([201, 200, 1]);
    // The request reads the directory; the conversation's object writes the response, in the business's shard only.
    expectOnlyItsShard(seen, shard, { readsItsShard: false });
    expect(await shardsHolding(intakeResponses, eq(intakeResponses.conversationId, cid))).toEqual([shard]);
  });

  it("OAuth: a connection, a refresh and a revocation", async () => {
    const statuses: number[] = [];
    const seen = await recorded(async () => {
      const connected = await connectApp(owner);
      const refreshed = await refresh(connected.client, connected.tokens.refresh_token);
      statuses.push(refreshed.status);
      const revoked = await postToken(
        { token: connected.tokens.access_token, client_id: connected.client.client_id },
        { path: "/api/oauth/revoke" },
      );
      statuses.push(revoked.status);
    });
    expect(statuses).toEqual([200, 200]);
    expectOnlyItsShard(seen, shard);
  });
});
