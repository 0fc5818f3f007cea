import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { and, eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { knowledgeItems, ownerKnowledgeSources } from "../../src/db/schema";
import { PUSHES_PER_HOUR } from "../../src/domain/knowledge/registration";
import type { BusinessLimits } from "../../src/durable-objects/business-limits";
import { createApiKey, createBusiness, db } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";

const TEXT = "Open Monday to Friday from nine to five.";
const push = (key: string, apiKey: string, body: unknown = { title: "Hours", content: TEXT }) =>
  call(`/api/v1/knowledge/${key}`, { key: apiKey, method: "PUT", body });

async function addOwnerSources(businessId: string, n: number) {
  for (let i = 0; i < n; i++) {
    await db.insert(ownerKnowledgeSources).values({
      businessId,
      kind: i % 2 ? "pdf" : "website",
      title: `Own source ${i}`,
      location: `https://own.example/${i}`,
      createdAt: new Date().toISOString(),
    });
  }
}

describe("PUT /api/v1/knowledge/{key}", async () => {
  const { business, apiKey } = await createBusiness({ plan: "business" });
  const itemOfThisBusiness = (key: string) =>
    and(eq(knowledgeItems.businessId, business.id), eq(knowledgeItems.key, key));

  it("creates an item (201) with exactly the fields of docs/guides/knowledge.md, Pushing a text, then replaces it (200)", async () => {
    const created = await push("opening-hours", apiKey);
    await expect(created).toHaveStatus(201);
    const body = await json(created);
    expect(body).toEqual({
      key: "opening-hours",
      title: "Hours",
      chars: TEXT.length,
      updatedAt: expect.any(String),
      createdAt: body.updatedAt,
      unchanged: false,
    });
    const replaced = await push("opening-hours", apiKey, { title: "Hours", content: `${TEXT} Closed on Sundays.` });
    await expect(replaced).toHaveStatus(200);
    const replacedBody = await json(replaced);
    expect(replacedBody).toMatchObject({ key: "opening-hours", unchanged: false, createdAt: body.createdAt });
    expect(String(replacedBody.updatedAt) >= String(body.updatedAt)).toBe(true);
  });

  it("says unchanged: true when a push changes nothing, and stores nothing", async () => {
    const before = await db.select().from(knowledgeItems).where(itemOfThisBusiness("opening-hours")).get();
    const again = await push("opening-hours", apiKey, { title: "Hours", content: `${TEXT} Closed on Sundays.` });
    await expect(again).toHaveStatus(200);
    expect(await json(again)).toMatchObject({ unchanged: true, updatedAt: before?.updatedAt });
    const titleOnly = await push("opening-hours", apiKey, {
      title: "Opening hours",
      content: `${TEXT} Closed on Sundays.`,
    });
    expect(await json(titleOnly)).toMatchObject({ unchanged: false, title: "Opening hours" });
  });

  it("counts characters, not bytes: 20 and 8,000 multi-byte characters are accepted", async () => {
    const twenty = `${"é".repeat(19)}😀`;
    const ok = await push("multibyte-20", apiKey, { title: "t", content: twenty });
    await expect(ok).toHaveStatus(201);
    expect((await json(ok)).chars).toBe(20);
    const max = "😀".repeat(8000);
    const full = await push("multibyte-8000", apiKey, { title: "t", content: max });
    await expect(full).toHaveStatus(201);
    expect((await json(full)).chars).toBe(8000);
    await call("/api/v1/knowledge/multibyte-20", { key: apiKey, method: "DELETE" });
    await call("/api/v1/knowledge/multibyte-8000", { key: apiKey, method: "DELETE" });
  });

  it("refuses 19 characters with 400 and 8,001 with 413", async () => {
    const short = await push("too-short", apiKey, { title: "t", content: "😀".repeat(19) });
    await expect(short).toHaveStatus(400);
    expect((await json(short)).error).toBe(
      'The field "content" is 19 characters long; knowledge content must be at least 20.',
    );
    const long = await push("too-long", apiKey, { title: "t", content: "é".repeat(8001) });
    await expect(long).toHaveStatus(413);
    expect((await json(long)).error).toBe(
      'The field "content" is 8001 characters long; knowledge content can be at most 8,000.',
    );
    expect(await db.select().from(knowledgeItems).where(itemOfThisBusiness("too-long")).get()).toBeUndefined();
  });

  it("says 1 character, in the singular", async () => {
    const one = await push("one-character", apiKey, { title: "t", content: "x" });
    await expect(one).toHaveStatus(400);
    expect((await json(one)).error).toBe(
      'The field "content" is 1 character long; knowledge content must be at least 20.',
    );
  });

  it.each([
    [{ content: TEXT }, 'The field "title" is required.', "parameter_missing", "title"],
    [
      { title: "x".repeat(201), content: TEXT },
      'The field "title" must be at most 200 characters long.',
      "parameter_invalid",
      "title",
    ],
    [
      { title: "", content: TEXT },
      'The field "title" must be at least 1 character long.',
      "parameter_invalid",
      "title",
    ],
    [{ title: "Hours" }, 'The field "content" is required.', "parameter_missing", "content"],
    [{ title: "Hours", content: 42 }, 'The field "content" must be a string.', "parameter_invalid", "content"],
  ] as const)("refuses %j with 400", async (body, error, code, param) => {
    await expectError(await push("valid-key", apiKey, body), 400, error, { code, param });
  });

  it.each(["a", "A.b_c:d-e", "9lives", "menu:2026.winter_special-v2", "x".repeat(80)])(
    "accepts the key %s",
    async (key) => {
      const response = await push(encodeURIComponent(key), apiKey);
      await expect(response).toHaveStatus(201);
      expect((await json(response)).key).toBe(key);
      await expect(
        await call(`/api/v1/knowledge/${encodeURIComponent(key)}`, { key: apiKey, method: "DELETE" }),
      ).toHaveStatus(204);
    },
  );

  it.each([
    "-lead",
    ".lead",
    "_lead",
    ":lead",
    "has space",
    "slash%2Fin",
    "ümlaut",
    "x".repeat(81),
    "semi;colon",
    "star*",
    "at@sign",
  ])("refuses the key %s with 400", async (key) => {
    const response = await push(encodeURIComponent(key), apiKey);
    await expect(response).toHaveStatus(400);
    expect((await json(response)).error).toMatch(/^The path parameter "key" must be 1 to 80 characters/);
  });
});

describe("GET and DELETE /api/v1/knowledge", async () => {
  const { apiKey } = await createBusiness();
  const other = await createBusiness();
  await push("faq", apiKey, { title: "FAQ", content: "We do not take walk-ins on Saturdays." });
  await push("theirs", other.apiKey);

  it("lists the business's items without content", async () => {
    const response = await call("/api/v1/knowledge", { key: apiKey });
    await expect(response).toHaveStatus(200);
    const body = await json<{ data: Array<Record<string, unknown>> }>(response);
    expect(body.data).toEqual([
      { key: "faq", title: "FAQ", chars: 37, updatedAt: expect.any(String), createdAt: expect.any(String) },
    ]);
  });

  it("never shows or deletes another business's items", async () => {
    await expect(await call("/api/v1/knowledge/theirs", { key: apiKey, method: "DELETE" })).toHaveStatus(404);
    const theirs = await json<{ data: Array<{ key: string }> }>(await call("/api/v1/knowledge", { key: other.apiKey }));
    expect(theirs.data.map((item) => item.key)).toEqual(["theirs"]);
  });

  it("deletes with 204, and a second delete is 404", async () => {
    await expect(await call("/api/v1/knowledge/faq", { key: apiKey, method: "DELETE" })).toHaveStatus(204);
    const again = await call("/api/v1/knowledge/faq", { key: apiKey, method: "DELETE" });
    await expect(again).toHaveStatus(404);
    await expectError(again, 404, "Nothing is stored under that knowledge key for this business.", {
      code: "not_found",
      param: undefined,
    });
    expect(await json(await call("/api/v1/knowledge", { key: apiKey }))).toEqual({ data: [] });
  });

  it("requires a credential", async () => {
    await expect(await call("/api/v1/knowledge")).toHaveStatus(401);
    await expect(
      await call("/api/v1/knowledge/faq", { method: "PUT", body: { title: "t", content: TEXT } }),
    ).toHaveStatus(401);
  });
});

describe("the source limit: 3 on Pro, 5 on Business, with the owner's own sources", () => {
  it("lets a Pro business with one own source push 2 keys, refuses the 3rd, and still replaces", async () => {
    const { business, apiKey } = await createBusiness({ plan: "pro" });
    await addOwnerSources(business.id, 1);
    await expect(await push("one", apiKey)).toHaveStatus(201);
    await expect(await push("two", apiKey)).toHaveStatus(201);
    const third = await push("three", apiKey);
    await expect(third).toHaveStatus(403);
    expect((await json(third)).error).toMatch(/Pro plan allows 3 knowledge sources/);
    const replaced = await push("two", apiKey, { title: "Hours", content: `${TEXT} Replaced.` });
    await expect(replaced).toHaveStatus(200);
    // Removing one frees its place.
    await expect(await call("/api/v1/knowledge/one", { key: apiKey, method: "DELETE" })).toHaveStatus(204);
    await expect(await push("three", apiKey)).toHaveStatus(201);
  });

  it("lets a Business business reach 5 sources with 2 of its own", async () => {
    const { business, apiKey } = await createBusiness({ plan: "business" });
    await addOwnerSources(business.id, 2);
    for (const key of ["a", "b", "c"]) await expect(await push(key, apiKey)).toHaveStatus(201);
    await expect(await push("d", apiKey)).toHaveStatus(403);
  });

  it("counts keys pushed by every key of the business together", async () => {
    const { business, apiKey } = await createBusiness({ plan: "pro" });
    const second = await createApiKey(business.id);
    await expect(await push("k1", apiKey)).toHaveStatus(201);
    await expect(await push("k2", second.apiKey)).toHaveStatus(201);
    await expect(await push("k3", apiKey)).toHaveStatus(201);
    await expect(await push("k4", second.apiKey)).toHaveStatus(403);
  });

  it("never passes the limit when 12 new keys are pushed at once", async () => {
    const { business, apiKey } = await createBusiness({ plan: "business" });
    await addOwnerSources(business.id, 1);
    const statuses = await Promise.all(
      Array.from({ length: 12 }, (_, i) => push(`race-${i}`, apiKey).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 201)).toHaveLength(4);
    expect(statuses.filter((s) => s === 403)).toHaveLength(8);
    expect(await db.$count(knowledgeItems, eq(knowledgeItems.businessId, business.id))).toBe(4);
  });

  it("stores one item when the same new key is pushed twice at once", async () => {
    const { business, apiKey } = await createBusiness({ plan: "pro" });
    const statuses = await Promise.all(
      [push("same", apiKey), push("same", apiKey)].map((p) => p.then((r) => r.status)),
    );
    expect(statuses.sort()).toEqual([200, 201]);
    expect(await db.$count(knowledgeItems, eq(knowledgeItems.businessId, business.id))).toBe(1);
  });
});

describe("120 pushes per business per clock hour", { timeout: 30_000 }, () => {
  it("answers the 121st push with 429 and Retry-After until the hour is up; replacements count", async () => {
    const { business, apiKey } = await createBusiness({ plan: "pro" });
    const limits = env.BUSINESS_LIMITS.get(env.BUSINESS_LIMITS.idFromName(business.id));
    let last: Response | undefined;
    for (let i = 0; i < PUSHES_PER_HOUR; i++) {
      last = await push("same-key", apiKey, { title: "Hours", content: `${TEXT} Version ${i}.` });
      await expect(last).toHaveStatus(i === 0 ? 201 : 200);
    }
    const POLICIES = '"requests";q=600;w=60, "knowledge_pushes";q=120;w=3600';
    expect(last?.headers.get("RateLimit-Policy")).toBe(POLICIES);
    const standing = /^"knowledge_pushes";r=0;t=(\d+)$/;
    expect(last?.headers.get("RateLimit")).toMatch(standing);
    const refused = await push("same-key", apiKey);
    const retryAfter = Number(refused.headers.get("Retry-After"));
    const secondsLeftInHour = 3600 - Math.floor((Date.now() % 3_600_000) / 1000);
    expect(retryAfter).toBeGreaterThan(0);
    expect(Math.abs(retryAfter - secondsLeftInHour)).toBeLessThanOrEqual(2);
    expect(refused.headers.get("RateLimit-Policy")).toBe(POLICIES);
    expect(refused.headers.get("RateLimit")).toBe(`"knowledge_pushes";r=0;t=${retryAfter}`);
    await expectError(refused, 429, /at most 120 knowledge pushes an hour/, { code: "rate_limited", param: undefined });
    // The refused push stored nothing.
    const stored = await db.select().from(knowledgeItems).where(eq(knowledgeItems.businessId, business.id)).get();
    expect(stored?.content).toBe(`${TEXT} Version 119.`);

    // The next clock hour starts a new count: drive the object's clock instead of sleeping.
    const nextHour = Date.now() - (Date.now() % 3_600_000) + 3_600_000;
    expect(await limits.take("knowledge_push", PUSHES_PER_HOUR, 3_600_000, nextHour + 5)).toMatchObject({
      allowed: true,
      remaining: 119,
    });
  });

  it("keeps counts in durable storage and drops ended windows, by alarm or on use", async () => {
    const { business } = await createBusiness();
    const stub = env.BUSINESS_LIMITS.get(env.BUSINESS_LIMITS.idFromName(business.id));
    const hour = 3_600_000;
    const start = Date.parse("2030-03-01T10:00:00.000Z");
    await stub.take("knowledge_push", 120, hour, start + 1000);
    await stub.take("knowledge_push", 120, hour, start + 2000);
    const stored = await runInDurableObject<BusinessLimits, unknown[]>(stub, (_instance, state) =>
      state.storage.sql.exec("SELECT name, window_end, used FROM windows").toArray(),
    );
    expect(stored).toEqual([{ name: "knowledge_push", window_end: start + hour, used: 2 }]);
    expect(await runInDurableObject<BusinessLimits, number | null>(stub, (_i, state) => state.storage.getAlarm())).toBe(
      start + hour,
    );
    // A use in a later hour drops the ended window.
    expect(await stub.take("knowledge_push", 120, hour, start + 2 * hour + 1)).toMatchObject({ remaining: 119 });
    const after = await runInDurableObject<BusinessLimits, unknown[]>(stub, (_i, state) =>
      state.storage.sql.exec("SELECT window_end FROM windows").toArray(),
    );
    expect(after).toEqual([{ window_end: start + 3 * hour }]);
    // The alarm, once the window is over, leaves nothing behind.
    await runInDurableObject<BusinessLimits, void>(stub, async (_i, state) => {
      state.storage.sql.exec("UPDATE windows SET window_end = ?", Date.now() - 1);
      await state.storage.setAlarm(Date.now() + 60_000);
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const left = await runInDurableObject<BusinessLimits, unknown[]>(stub, (_i, state) =>
      state.storage.sql.exec("SELECT * FROM windows").toArray(),
    );
    expect(left).toEqual([]);
  });

  it("counts exactly when pushes arrive together", async () => {
    const { business } = await createBusiness();
    const stub = env.BUSINESS_LIMITS.get(env.BUSINESS_LIMITS.idFromName(business.id));
    const now = Date.parse("2030-04-01T10:30:00.000Z");
    const uses = await Promise.all(Array.from({ length: 130 }, () => stub.take("knowledge_push", 120, 3_600_000, now)));
    expect(uses.filter((use) => use.allowed)).toHaveLength(120);
    expect(new Set(uses.filter((use) => use.allowed).map((use) => use.remaining)).size).toBe(120);
  });
});
