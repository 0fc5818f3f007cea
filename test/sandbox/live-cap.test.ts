import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { businessShards, ownerEmails } from "../../src/db/schema";
import { MAX_LIVE_SANDBOXES } from "../../src/domain/sandbox/businesses";
import { globalDb } from "../helpers/fixtures";
import { call, expectError } from "../helpers/http";

// docs/guides/sandbox.md, Budgets: at most MAX_LIVE_SANDBOXES sandbox businesses at once, counted in the directory and
// kept in one batch, so that creations at the same moment never pass it. A storage of its own (vitest.config.ts): the
// test fills the directory up to two places below the cap.

const sandboxes = () => globalDb.$count(businessShards, eq(businessShards.sandbox, true));
const create = () => call("/api/sandbox/businesses", { method: "POST", body: {} });

describe("the cap on sandbox businesses in use at once", () => {
  it("admits exactly the places left of concurrent creations, then 429 with Retry-After", async () => {
    const missing = MAX_LIVE_SANDBOXES - 2 - (await sandboxes());
    await globalDb.run(
      sql`with recursive n(i) as (select 1 union all select i + 1 from n where i < ${missing})
          insert into business_shards (business_id, shard, created_at, sandbox)
          select 'filler-' || i, 'sandbox', '2026-01-01T00:00:00.000Z', 1 from n`,
    );
    expect(await sandboxes()).toBe(MAX_LIVE_SANDBOXES - 2);
    const emailsBefore = await globalDb.$count(ownerEmails);

    const answers = await Promise.all(Array.from({ length: 5 }, create));
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 429, 429, 429]);
    expect(await sandboxes()).toBe(MAX_LIVE_SANDBOXES);
    // A refused creation leaves no owner's email behind: only the two made have one.
    expect(await globalDb.$count(ownerEmails)).toBe(emailsBefore + 2);

    const refused = answers.find((answer) => answer.status === 429) as Response;
    expect(refused.headers.get("Retry-After")).toBe("3600");
    await expectError(
      refused,
      429,
      new RegExp(`The sandbox is full: ${MAX_LIVE_SANDBOXES} sandbox businesses are in use`),
      { code: "rate_limited" },
    );

    // A place freed (a sandbox removed after its days unused) is taken again.
    await globalDb.delete(businessShards).where(eq(businessShards.businessId, "filler-1"));
    await expect(await create()).toHaveStatus(201);
    await expect(await create()).toHaveStatus(429);
  });
});
