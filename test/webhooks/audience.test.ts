import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { events } from "../../src/db/schema";
import type { SqlSide } from "../../src/domain/access/scope";
import { type AddressedTo, audienceOf, receivableBy, type StoredAudience } from "../../src/domain/webhooks/audience";
import type { WebhookEndpoint } from "../../src/domain/webhooks/endpoints";
import { createBusiness, db } from "../helpers/fixtures";

/* An event's audience, written with the event and read back in SQL by the Events API: one encoder, one decoder. */
describe("an event's stored audience (src/domain/webhooks/audience.ts)", async () => {
  const { business } = await createBusiness();
  const endpoint = (id: number, oauthGrantId: number | null) => ({ id, oauthGrantId }) as WebhookEndpoint;

  it.each<[string, AddressedTo, WebhookEndpoint[], StoredAudience]>([
    ["everyone", {}, [], null],
    ["the API keys' side", { audience: { side: null } }, [], "keys"],
    ["an app connection's side", { audience: { side: 7 } }, [], "app:7"],
    ["one API key", { audience: { principal: { apiKeyId: 3, oauthGrantId: null } } }, [], "key:3"],
    ["one app connection", { audience: { principal: { apiKeyId: null, oauthGrantId: 7 } } }, [], "app:7"],
    ["the one endpoint of a ping, by its side", { endpointId: 5 }, [endpoint(5, 9), endpoint(6, null)], "app:9"],
    ["the one endpoint of a test, the keys' side", { endpointId: 6 }, [endpoint(5, 9), endpoint(6, null)], "keys"],
    ["nobody, for an endpoint not among those read", { endpointId: 4 }, [endpoint(5, 9)], "none"],
  ])("stores %s", (_who, draft, endpoints, stored) => {
    expect(audienceOf(draft, endpoints)).toBe(stored);
  });

  it("lists each stored audience to exactly the principals it names", async () => {
    const stored: StoredAudience[] = [null, "keys", "key:3", "key:4", "app:7", "app:8", "none"];
    const now = new Date().toISOString();
    await db.insert(events).values(
      stored.map((audience, i) => ({
        id: `evt_audience${i}${crypto.randomUUID().replaceAll("-", "")}`,
        businessId: business.id,
        type: "ping",
        envelope: "{}",
        audience,
        createdAt: now,
      })),
    );
    const listedTo = async (scope: Omit<SqlSide, "businessId">) =>
      (
        await db
          .select({ audience: events.audience })
          .from(events)
          .where(and(eq(events.businessId, business.id), receivableBy({ businessId: business.id, ...scope })))
      )
        .map((row) => row.audience)
        .sort();

    expect(await listedTo({ apiKeyId: 3, oauthGrantId: null })).toEqual([null, "keys", "key:3"].sort());
    expect(await listedTo({ apiKeyId: 5, oauthGrantId: null })).toEqual([null, "keys"].sort());
    expect(await listedTo({ apiKeyId: null, oauthGrantId: 7 })).toEqual([null, "app:7"].sort());
  });
});
