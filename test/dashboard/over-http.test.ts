import { and, asc, eq, isNull } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { apiKeys } from "../../src/db/schema";
import { post, signedIn } from "../helpers/dashboard";
import { db } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { browse, CookieJar, createOwnerBusiness, csrfTokenOf } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";

describe("the dashboard over HTTP (the browser tests drive it for real: test-e2e/)", async () => {
  const mine = await createOwnerBusiness();
  const theirs = await createOwnerBusiness();
  const jar = await signedIn(mine);

  it("sends a visitor without a session to the sign-in page", async () => {
    for (const path of ["/dashboard", "/dashboard/keys", "/dashboard/actions/1"]) {
      const response = await call(path);
      await expect(response).toHaveStatus(303);
      expect(response.headers.get("Location")).toBe("/dashboard/sign-in");
    }
  });

  it("refuses a wrong password with 401 and starts no session", async () => {
    const other = new CookieJar();
    const page = await browse(other, "/dashboard/sign-in");
    const refused = await post(other, "/dashboard/sign-in", {
      csrf_token: csrfTokenOf(await page.text()),
      email: mine.owner.email,
      password: "wrong",
    });
    await expect(refused).toHaveStatus(401);
    expect(other.cookies.has("__Host-owner_session")).toBe(false);
  });

  it("serves pages that cannot be framed, run no script and are not cached", async () => {
    const page = await browse(jar, "/dashboard");
    await expect(page).toHaveStatus(200);
    expect(page.headers.get("X-Frame-Options")).toBe("DENY");
    expect(page.headers.get("Content-Security-Policy")).toMatch(/default-src 'none'.*frame-ancestors 'none'/);
    expect(page.headers.get("Cache-Control")).toBe("no-store");
    const html = await page.text();
    expect(html).not.toContain("<script");
    expect(html).toContain(mine.business.name);
  });

  it("refuses a form without the session's CSRF token, or posted from another origin, changing nothing", async () => {
    const before = await db.$count(apiKeys, eq(apiKeys.businessId, mine.business.id));
    const withoutToken = await post(jar, "/dashboard/keys", { label: "forged" });
    await expect(withoutToken).toHaveStatus(403);
    expect(await withoutToken.text()).toContain("This form was not sent from your dashboard");
    const csrf = csrfTokenOf(await (await browse(jar, "/dashboard/keys")).text());
    const crossOrigin = await post(
      jar,
      "/dashboard/keys",
      { label: "forged", csrf_token: csrf },
      "https://evil.example",
    );
    await expect(crossOrigin).toHaveStatus(403);
    expect(await db.$count(apiKeys, eq(apiKeys.businessId, mine.business.id))).toBe(before);
  });

  it("creates a key shown once, which works, and revokes it", async () => {
    const csrf = csrfTokenOf(await (await browse(jar, "/dashboard/keys")).text());
    const created = await post(jar, "/dashboard/keys", { label: "Booking tool", csrf_token: csrf });
    await expect(created).toHaveStatus(201);
    const key = /data-testid="new-key">([^<]+)</.exec(await created.text())?.[1]?.trim() ?? "";
    expect(key).toMatch(/^sk_live_eu1_[A-Za-z0-9_-]{43}$/);
    await expect(await call("/api/v1/me", { key })).toHaveStatus(200);
    const listed = await (await browse(jar, "/dashboard/keys")).text();
    expect(listed).not.toContain(key);
    const row = await db.select().from(apiKeys).where(eq(apiKeys.label, "Booking tool")).get();
    const revoked = await post(jar, `/dashboard/keys/${row?.id}/revoke`, { csrf_token: csrf });
    await expect(revoked).toHaveStatus(303);
    await expect(await call("/api/v1/me", { key })).toHaveStatus(401);
  });

  it("shows another business's records as not found, and changes nothing of theirs", async () => {
    const action = await json<{ id: number }>(
      await call("/api/v1/actions", {
        key: theirs.apiKey,
        method: "POST",
        body: {
          name: "theirs",
          title: "Theirs",
          description: "Another business's lookup action.",
          url: "https://partner.example/x",
        },
      }),
    );
    const page = await browse(jar, `/dashboard/actions/${action.id}`);
    await expect(page).toHaveStatus(404);
    expect(await page.text()).toContain("No action with that id exists for this business.");
    const csrf = csrfTokenOf(await (await browse(jar, "/dashboard/keys")).text());
    await expect(await post(jar, `/dashboard/actions/${action.id}/on`, { csrf_token: csrf })).toHaveStatus(404);
    const stillOff = await json<{ enabled: boolean }>(
      await call(`/api/v1/actions/${action.id}`, { key: theirs.apiKey }),
    );
    expect(stillOff.enabled).toBe(false);
    const theirKey = await db.select().from(apiKeys).where(eq(apiKeys.businessId, theirs.business.id)).get();
    await expect(await post(jar, `/dashboard/keys/${theirKey?.id}/revoke`, { csrf_token: csrf })).toHaveStatus(404);
    await expect(await call("/api/v1/me", { key: theirs.apiKey })).toHaveStatus(200);
    await expect(await browse(jar, "/dashboard/intakes/999999")).toHaveStatus(404);
    await expect(await browse(jar, "/dashboard/webhooks/abc")).toHaveStatus(404);
  });

  /** An action registered by the business's partner, and its page as the owner sees it. */
  async function partnerAction(name: string, parameters?: Record<string, unknown>) {
    const created = await call("/api/v1/actions", {
      key: mine.apiKey,
      method: "POST",
      body: {
        name,
        title: "Check stock",
        description: "Tells whether a product is in stock today.",
        url: receiverBox(name).url("/ok"),
        parameters,
      },
    });
    await expect(created).toHaveStatus(201);
    return json<{ id: number }>(created);
  }
  const reviewedOf = (html: string) => /name="reviewed" value="([0-9a-f]{64})"/.exec(html)?.[1] ?? "";
  const enabledOf = async (id: number) =>
    (await json<{ enabled: boolean }>(await call(`/api/v1/actions/${id}`, { key: mine.apiKey }))).enabled;

  it("switches an action on only as the owner reviewed it: a PATCH landing meanwhile shows it again", async () => {
    const action = await partnerAction("stock_reviewed");
    const viewed = await (await browse(jar, `/dashboard/actions/${action.id}`)).text();
    const csrf = csrfTokenOf(viewed);
    const reviewed = reviewedOf(viewed);
    expect(reviewed).not.toBe("");

    const description = "Tells whether a product is in stock in any of our shops.";
    const patched = await call(`/api/v1/actions/${action.id}`, {
      key: mine.apiKey,
      method: "PATCH",
      body: { description },
    });
    await expect(patched).toHaveStatus(200);
    const refused = await post(jar, `/dashboard/actions/${action.id}/on`, { csrf_token: csrf, reviewed });
    await expect(refused).toHaveStatus(409);
    const shownAgain = await refused.text();
    expect(shownAgain).toContain("The action has changed since it was reviewed");
    expect(shownAgain).toContain(description);
    expect(await enabledOf(action.id)).toBe(false);

    // A form without the reviewed version (an old page, a forged post) switches nothing on either.
    await expect(await post(jar, `/dashboard/actions/${action.id}/on`, { csrf_token: csrf })).toHaveStatus(409);
    expect(await enabledOf(action.id)).toBe(false);

    const again = reviewedOf(shownAgain);
    expect(again).not.toBe(reviewed);
    const switched = await post(jar, `/dashboard/actions/${action.id}/on`, { csrf_token: csrf, reviewed: again });
    await expect(switched).toHaveStatus(303);
    expect(await enabledOf(action.id)).toBe(true);
  });

  it("does not ask to review again when only the title changed (the Secretary never sees it)", async () => {
    const action = await partnerAction("stock_retitled");
    const viewed = await (await browse(jar, `/dashboard/actions/${action.id}`)).text();
    await call(`/api/v1/actions/${action.id}`, { key: mine.apiKey, method: "PATCH", body: { title: "Stock" } });
    const switched = await post(jar, `/dashboard/actions/${action.id}/on`, {
      csrf_token: csrfTokenOf(viewed),
      reviewed: reviewedOf(viewed),
    });
    await expect(switched).toHaveStatus(303);
    expect(await enabledOf(action.id)).toBe(true);
  });

  it("makes no Test call without a required parameter, and says which on the page", async () => {
    const action = await partnerAction("stock_test", {
      type: "object",
      properties: { sku: { type: "string", description: "Product code" } },
      required: ["sku"],
    });
    const csrf = csrfTokenOf(await (await browse(jar, `/dashboard/actions/${action.id}`)).text());
    const tested = await post(jar, `/dashboard/actions/${action.id}/test`, { csrf_token: csrf, arguments: "{}" });
    await expect(tested).toHaveStatus(422);
    const page = await tested.text();
    expect(page).toContain("The required parameter &quot;sku&quot; is missing");
    expect(page).toContain("Switch on");
    const detail = await json<{ calls: unknown[] }>(await call(`/api/v1/actions/${action.id}`, { key: mine.apiKey }));
    expect(detail.calls).toEqual([]);
  });

  it("signs out: the session no longer opens a page", async () => {
    const csrf = csrfTokenOf(await (await browse(jar, "/dashboard")).text());
    const token = jar.cookies.get("__Host-owner_session");
    const out = await post(jar, "/dashboard/sign-out", { csrf_token: csrf });
    await expect(out).toHaveStatus(303);
    const replayed = await call("/dashboard", { headers: { Cookie: `__Host-owner_session=${token}` } });
    await expect(replayed).toHaveStatus(303);
  });
});

describe("the limit of 10 active keys (docs/guides/getting-started.md, A credential)", () => {
  const activeKeys = (businessId: string) =>
    db.$count(apiKeys, and(eq(apiKeys.businessId, businessId), isNull(apiKeys.revokedAt)));

  /** The owner signed in, with the key the fixture made revoked: the business starts with no active key. */
  async function ownerWithoutKeys() {
    const owner = await createOwnerBusiness();
    const jar = await signedIn(owner);
    const csrf = csrfTokenOf(await (await browse(jar, "/dashboard/keys")).text());
    for (const key of await db.select().from(apiKeys).where(eq(apiKeys.businessId, owner.business.id))) {
      await expect(await post(jar, `/dashboard/keys/${key.id}/revoke`, { csrf_token: csrf })).toHaveStatus(303);
    }
    expect(await activeKeys(owner.business.id)).toBe(0);
    return { owner, jar, csrf };
  }

  it("refuses the 11th key with 403 saying why, and makes one again once a key is revoked", async () => {
    const { owner, jar, csrf } = await ownerWithoutKeys();
    const create = (label: string) => post(jar, "/dashboard/keys", { label, csrf_token: csrf });
    for (let n = 1; n <= 10; n++) await expect(await create(`Key ${n}`)).toHaveStatus(201);

    const refused = await create("Key 11");
    await expect(refused).toHaveStatus(403);
    expect(await refused.text()).toContain(
      "A business can have at most 10 active API keys: revoke one before creating another.",
    );
    expect(await activeKeys(owner.business.id)).toBe(10);

    const oldest = await db
      .select()
      .from(apiKeys)
      .where(and(eq(apiKeys.businessId, owner.business.id), isNull(apiKeys.revokedAt)))
      .orderBy(asc(apiKeys.id))
      .get();
    await expect(await post(jar, `/dashboard/keys/${oldest?.id}/revoke`, { csrf_token: csrf })).toHaveStatus(303);
    const again = await create("Key 11");
    await expect(again).toHaveStatus(201);
    const key = /data-testid="new-key">([^<]+)</.exec(await again.text())?.[1]?.trim() ?? "";
    await expect(await call("/api/v1/me", { key })).toHaveStatus(200);
    expect(await activeKeys(owner.business.id)).toBe(10);
    await expect(await create("Key 12")).toHaveStatus(403);
  });

  it("leaves exactly 10 active keys when 12 are created at once", async () => {
    const { owner, jar, csrf } = await ownerWithoutKeys();
    const responses = await Promise.all(
      Array.from({ length: 12 }, (_, n) => post(jar, "/dashboard/keys", { label: `Race ${n}`, csrf_token: csrf })),
    );
    expect(responses.map((response) => response.status).sort()).toEqual([...Array(10).fill(201), 403, 403]);
    expect(await activeKeys(owner.business.id)).toBe(10);
  });
});
