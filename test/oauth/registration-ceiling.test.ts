import { env } from "cloudflare:test";
import { eq, isNull, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { oauthClients } from "../../src/db/schema";
import { UNAPPROVED_CLIENTS_PER_HOUR } from "../../src/domain/oauth/clients";
import { globalDb } from "../helpers/fixtures";
import { call, expectError } from "../helpers/http";
import { authorizeQuery, REDIRECT_URI, register, validAuthorizationParams } from "../helpers/oauth";
import { queryPlan } from "../helpers/query-plan";
import { recordingDatabases } from "../helpers/recording-databases";

// docs/guides/oauth.md, 1. Register once: at most UNAPPROVED_CLIENTS_PER_HOUR clients not yet approved registered in an
// hour, whatever the addresses, counted and inserted in one batch so that registrations at the same moment never pass
// it. A storage of its own (vitest.config.ts): the test fills the hour up to two places below the ceiling.

const unapproved = () => globalDb.$count(oauthClients, isNull(oauthClients.firstApprovedAt));
const registration = (n: number) =>
  register({ client_name: `Ceiling ${n}`, redirect_uris: [REDIRECT_URI] }, { "CF-Connecting-IP": `198.18.7.${n}` });

describe("the ceiling on unapproved clients an hour", () => {
  it("admits exactly the places left of concurrent registrations, then 429; approved clients and an older hour do not count", async () => {
    const missing = UNAPPROVED_CLIENTS_PER_HOUR - 2 - (await unapproved());
    const recently = new Date(Date.now() - 30 * 60_000).toISOString();
    await globalDb.run(
      sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${missing})
          insert into oauth_clients (id, client_name, redirect_uris, token_endpoint_auth_method, created_at)
          select 'cl_filler_' || i, 'Filler', '["https://partner.example/cb"]', 'none', ${recently} from n`,
    );
    expect(await unapproved()).toBe(UNAPPROVED_CLIENTS_PER_HOUR - 2);

    const answers = await Promise.all(Array.from({ length: 5 }, (_, n) => registration(n + 1)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 429, 429, 429]);
    expect(await unapproved()).toBe(UNAPPROVED_CLIENTS_PER_HOUR);
    const refused = answers.find((answer) => answer.status === 429) as Response;
    expect(refused.headers.get("Retry-After")).toBe("3600");
    expect(refused.headers.get("Cache-Control")).toBe("no-store");
    await expectError(refused, 429, /Too many apps registered in the last hour: at most 1000/, {
      code: "rate_limited",
    });

    // An owner approves one of them: it no longer counts, and frees exactly one place.
    await globalDb.update(oauthClients).set({ firstApprovedAt: recently }).where(eq(oauthClients.id, "cl_filler_1"));
    await expect(await registration(6)).toHaveStatus(201);
    await expect(await registration(7)).toHaveStatus(429);

    // Registered over an hour ago, the fillers no longer count: registration opens again.
    await globalDb.run(
      sql`update oauth_clients set created_at = '2026-01-01T00:00:00.000Z' where id like 'cl_filler_%'`,
    );
    await expect(await registration(9)).toHaveStatus(201);
  });

  it("counts by a range scan of the index of unapproved clients, whatever the table holds", async () => {
    const { bindings, seen } = recordingDatabases(env);
    const response = await call("/api/oauth/register", {
      method: "POST",
      body: { client_name: "Planned", redirect_uris: [REDIRECT_URI] },
      bindings,
    });
    await expect(response).toHaveStatus(201);
    const ceiling = seen.legacy.find((statement) => /^delete from "oauth_clients"/.test(statement));
    if (!ceiling) throw new Error("the registration ran no statement of the ceiling");
    const unbound = Array.from(ceiling.matchAll(/\?/g), () => null);
    const details = await queryPlan(env.DB, ceiling, unbound);
    expect(details).toContain("SEARCH oauth_clients USING INDEX oauth_clients_unapproved (created_at>?)");
    expect(details.filter((detail) => /SCAN oauth_clients\b/.test(detail))).toEqual([]);
  });

  it("neither counts nor refuses the clients of metadata documents (docs/oauth.md, Client ID metadata documents)", async () => {
    // The hour holds exactly the ceiling of registered clients: the earlier tests' are moved out of it.
    await globalDb.run(
      sql`update oauth_clients set created_at = '2026-01-01T00:00:00.000Z' where first_approved_at is null`,
    );
    const recently = new Date(Date.now() - 30 * 60_000).toISOString();
    await globalDb.run(
      sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${UNAPPROVED_CLIENTS_PER_HOUR})
          insert into oauth_clients (id, client_name, redirect_uris, token_endpoint_auth_method, created_at)
          select 'cl_full_' || i, 'Filler', '["https://partner.example/cb"]', 'none', ${recently} from n`,
    );
    await expect(await registration(10)).toHaveStatus(429);
    const document = `${env.RECEIVER_URL}/ceiling/cimd/-/${encodeURIComponent(JSON.stringify({ client_name: "Claude", redirect_uris: [REDIRECT_URI] }))}`;
    const { params } = await validAuthorizationParams({
      client_id: document,
      client_name: "Claude",
      redirect_uris: [REDIRECT_URI],
      token_endpoint_auth_method: "none",
    });
    await expect(await call(`/oauth/authorize?${authorizeQuery(params)}`)).toHaveStatus(200);
    const stored = await globalDb.select().from(oauthClients).where(eq(oauthClients.id, document)).get();
    expect(stored).toMatchObject({ clientName: "Claude", firstApprovedAt: null });
    // The document's client does not count: a registration still finds the hour exactly full.
    await globalDb.delete(oauthClients).where(eq(oauthClients.id, "cl_full_1"));
    await expect(await registration(11)).toHaveStatus(201);
    await expect(await registration(12)).toHaveStatus(429);
  });
});
