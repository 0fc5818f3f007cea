import { env, exports } from "cloudflare:workers";
import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { businesses, businessShards, ownerEmails } from "../../src/db/schema";
import { SANDBOX_CREATIONS_PER_MINUTE } from "../../src/domain/sandbox/businesses";
import { DEMO_BOOKINGS, DEMO_KNOWLEDGE, DEMO_ORDERS } from "../../src/domain/sandbox/demo-data";
import { SANDBOX_IDS } from "../../src/domain/sandbox/record-ids";
import { countingShards } from "../helpers/counting-d1";
import { page, signedIn } from "../helpers/dashboard";
import { createBusiness, globalDb, shardDb } from "../helpers/fixtures";
import { call, expectError, json, RUNTIME } from "../helpers/http";
import { intakeBody, runtimeIntake } from "../helpers/intakes";
import type { OwnerBusiness } from "../helpers/oauth";
import { newBooking } from "../helpers/platform-changes";
import { awayFromWindowEdge } from "../helpers/rate-limit-window";

type Created = {
  business_id: string;
  api_key: string;
  owner_email: string;
  owner_password: string;
  shard: string;
  dashboard_url: string;
};

const create = (body?: unknown, headers: Record<string, string> = {}) =>
  call("/api/sandbox/businesses", { method: "POST", body, headers });

async function created(body?: unknown): Promise<Created> {
  const response = await create(body);
  await expect(response).toHaveStatus(201);
  expect(response.headers.get("Cache-Control")).toBe("no-store");
  return json<Created>(response);
}

const list = async (key: string, path: string) => {
  const response = await call(path, { key });
  await expect(response).toHaveStatus(200);
  return (await json<{ data: Array<Record<string, unknown>> }>(response)).data;
};

describe("POST /api/sandbox/businesses (docs/decisions.md, Sandbox businesses)", () => {
  it("answers 201 with a test key and an owner's sign-in, without a body or a credential", async () => {
    const sandbox = await created();
    expect(sandbox).toEqual({
      business_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      api_key: expect.stringMatching(/^sk_test_sandbox_[A-Za-z0-9_-]{43}$/),
      owner_email: expect.stringMatching(/^sandbox-[0-9a-f]{20}@sandbox\.secretary\.example$/),
      owner_password: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      shard: "sandbox",
      dashboard_url: "http://localhost:8787/dashboard",
    });
    const [row] = await shardDb("sandbox").select().from(businesses).where(eq(businesses.id, sandbox.business_id));
    expect(row).toMatchObject({
      sandbox: true,
      plan: "business",
      planActive: true,
      country: "NL",
      currency: "EUR",
      timeZone: "Europe/Amsterdam",
    });
    const [listed] = await globalDb
      .select()
      .from(businessShards)
      .where(eq(businessShards.businessId, sandbox.business_id));
    expect(listed).toMatchObject({ shard: "sandbox", sandbox: true });
    const [email] = await globalDb.select().from(ownerEmails).where(eq(ownerEmails.email, sandbox.owner_email));
    expect(email?.businessId).toBe(sandbox.business_id);
  });

  it("accepts an empty body and an empty JSON object alike", async () => {
    await expect(await create("", { "Content-Type": "application/json" })).toHaveStatus(201);
    await expect(await create({})).toHaveStatus(201);
  });

  it("gives a key that works on GET /me and lists the demo bookings, orders and knowledge", async () => {
    const sandbox = await created({ name: "Kapsalon Test", country: "nl" });
    const me = await call("/api/v1/me", { key: sandbox.api_key });
    await expect(me).toHaveStatus(200);
    expect(await json(me)).toMatchObject({ id: sandbox.business_id, name: "Kapsalon Test", country: "NL" });

    const bookings = await list(sandbox.api_key, "/api/v1/appointments?limit=100");
    expect(bookings).toHaveLength(DEMO_BOOKINGS.length);
    expect(new Set(bookings.map((booking) => booking.status))).toEqual(
      new Set(["completed", "cancelled", "confirmed", "pending", "no_show"]),
    );
    const { first, last } = SANDBOX_IDS;
    for (const booking of bookings) expect(booking.id).toSatisfy((id: number) => id >= first && id <= last);
    const orders = await list(sandbox.api_key, "/api/v1/orders?limit=100");
    expect(orders).toHaveLength(DEMO_ORDERS.length);
    expect(new Set(orders.map((order) => order.status)).size).toBe(DEMO_ORDERS.length);
    const knowledge = await list(sandbox.api_key, "/api/v1/knowledge");
    expect(knowledge.map((item) => item.key).sort()).toEqual(DEMO_KNOWLEDGE.map((item) => item.key).sort());
  });

  it("places every sandbox in the sandbox database, whatever its country, with its country's currency", async () => {
    const us = await created({ country: "US" });
    expect(us.shard).toBe("sandbox");
    expect(us.api_key.startsWith("sk_test_sandbox_")).toBe(true);
    expect(await json(await call("/api/v1/me", { key: us.api_key }))).toMatchObject({ currency: "USD", country: "US" });
    expect((await created({ country: "NL" })).shard).toBe("sandbox");
  });

  it("lets the owner sign in to the dashboard with the email and password it answered", async () => {
    const sandbox = await created({ name: "Owner Check" });
    const owner = { owner: { email: sandbox.owner_email, password: sandbox.owner_password } } as OwnerBusiness;
    const jar = await signedIn(owner);
    const overview = await page(jar, "/dashboard");
    await expect(overview).toHaveStatus(200);
    expect(overview.html).toContain("Owner Check");
  });

  it.each([
    [{ name: "x" }, "name"],
    [{ name: "a".repeat(81) }, "name"],
    [{ name: "Zero\u200bwidth" }, "name"],
    [{ country: "NLD" }, "country"],
    [{ country: "1A" }, "country"],
    [{ country: 31 }, "country"],
  ])("refuses %j with 400 naming the member", async (body, param) => {
    await expectError(await create(body), 400, /./, { param });
  });

  it("refuses a body that is not JSON", async () => {
    await expectError(await create("{", { "Content-Type": "application/json" }), 400, /not valid JSON/, {
      code: "invalid_json",
    });
    await expectError(await create("name=x", { "Content-Type": "text/plain" }), 400, /application\/json/, {
      code: "invalid_content_type",
    });
  });

  it("keeps it apart: a live key of another business cannot read it, its key reads no other", async () => {
    const sandbox = await created();
    const live = await createBusiness({ plan: "business", shard: "eu1" });
    const bookings = await list(sandbox.api_key, "/api/v1/appointments?limit=100");
    const id = bookings[0]?.id;
    await expect(await call(`/api/v1/appointments/${id}`, { key: live.apiKey })).toHaveStatus(404);
    expect(await list(live.apiKey, "/api/v1/appointments")).toEqual([]);
    await expect(await call("/api/v1/me", { key: live.apiKey })).toHaveStatus(200);
  });

  it("makes two distinct businesses of two concurrent creations, with disjoint ids", async () => {
    const [a, b] = await Promise.all([created(), created()]);
    expect(a?.business_id).not.toBe(b?.business_id);
    expect(a?.owner_email).not.toBe(b?.owner_email);
    const ids = async (sandbox: Created) =>
      (await list(sandbox.api_key, "/api/v1/appointments?limit=100")).map((booking) => booking.id as number);
    const [first, second] = [await ids(a as Created), await ids(b as Created)];
    expect(first).toHaveLength(DEMO_BOOKINGS.length);
    expect(new Set([...first, ...second]).size).toBe(first.length + second.length);
  });

  it("makes one in two D1 round trips: the directory, then one batch in its shard", async () => {
    const { bindings, trips } = countingShards(env);
    const response = await call("/api/sandbox/businesses", { method: "POST", body: {}, bindings });
    await expect(response).toHaveStatus(201);
    expect(trips).toHaveLength(2);
    expect(trips.every((trip) => trip.startsWith("batch of"))).toBe(true);
  });

  it(`answers 429 with Retry-After past ${SANDBOX_CREATIONS_PER_MINUTE} creations a minute from one address`, {
    timeout: 30_000,
  }, async () => {
    await awayFromWindowEdge(10_000);
    const random = () => crypto.getRandomValues(new Uint8Array(1))[0] ?? 0;
    const address = `198.19.${random()}.${random()}`;
    const from = (ip: string) => create({}, { "CF-Connecting-IP": ip });
    for (let i = 0; i < SANDBOX_CREATIONS_PER_MINUTE; i++) await expect(await from(address)).toHaveStatus(201);
    const refused = await from(address);
    expect(refused.headers.get("Retry-After")).toBe("60");
    await expectError(refused, 429, /Too many sandbox businesses from this address/, {
      code: "rate_limited",
      param: undefined,
    });
    await expect(await from(`198.19.${random()}.${random()}`)).toHaveStatus(201);
  });

  it("counts an IPv6 client by its /48: stepping through its /64s does not pass the limit", {
    timeout: 30_000,
  }, async () => {
    await awayFromWindowEdge(10_000);
    const group = () => (crypto.getRandomValues(new Uint16Array(1))[0] ?? 0).toString(16);
    const site = `2001:db8:${group()}`;
    const from = (ip: string) => create({}, { "CF-Connecting-IP": ip });
    // Each creation from another /64 of the same /48.
    for (let i = 0; i < SANDBOX_CREATIONS_PER_MINUTE; i++)
      await expect(await from(`${site}:${i}::1`)).toHaveStatus(201);
    await expectError(await from(`${site}:ffff::1`), 429, /Too many sandbox businesses from this address/);
    await expect(await from(`2001:db8:${group()}:1::1`)).toHaveStatus(201);
  });
});

describe("the core platform never reaches a sandbox business (docs/decisions.md, Sandbox businesses)", async () => {
  const sandbox = await created();
  const unknown = "No business has that id.";

  it("answers 404 on every /internal/v1/businesses/{id} route, as for an unknown business", async () => {
    const path = `/internal/v1/businesses/${sandbox.business_id}`;
    const report = await call(`${path}/events`, { method: "POST", body: { booking: newBooking() }, headers: RUNTIME });
    await expectError(report, 404, unknown);
    const plan = await call(`${path}/plan`, {
      method: "PUT",
      body: { plan: "free", active: true },
      headers: RUNTIME,
    });
    await expectError(plan, 404, unknown);
    await expectError(await call(`${path}/context?channel=whatsapp`, { headers: RUNTIME }), 404, unknown);
    const [row] = await shardDb("sandbox").select().from(businesses).where(eq(businesses.id, sandbox.business_id));
    expect(row).toMatchObject({ plan: "business", planActive: true });
  });

  it("answers the RPC entrypoint's methods as unknown too", async () => {
    const runtime = exports.RuntimeApi;
    expect(await runtime.reportChange(sandbox.business_id, { booking: newBooking() })).toMatchObject({
      ok: false,
      status: 404,
      error: unknown,
    });
    const refused = { ok: false, status: 404, code: "not_found" };
    expect(await runtime.setPlan(sandbox.business_id, { plan: "free", active: true })).toMatchObject(refused);
    expect(await runtime.context(sandbox.business_id, "whatsapp")).toMatchObject(refused);
  });

  it("does not start the runtime's intake conversation for it, over HTTP or RPC", async () => {
    const intake = await json<{ id: number }>(
      await call("/api/v1/intakes", { key: sandbox.api_key, method: "POST", body: intakeBody() }),
    );
    const body = { intake_id: intake.id, channel: "sms" };
    const cid = `conv-${crypto.randomUUID()}`;
    await expectError(await runtimeIntake({ id: sandbox.business_id }).start(cid, body), 404, unknown, {
      code: "not_found",
    });
    expect(
      await exports.RuntimeApi.startIntake(sandbox.business_id, `conv-${crypto.randomUUID()}`, body),
    ).toMatchObject({
      ok: false,
      status: 404,
      code: "not_found",
    });
  });
});
