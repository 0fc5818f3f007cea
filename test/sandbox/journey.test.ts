import { describe, expect, it, vi } from "vitest";
import { registerAction } from "../helpers/actions";
import { approveIntake, signedIn, switchActionOn } from "../helpers/dashboard";
import { createApiKey, createBusiness } from "../helpers/fixtures";
import { call, expectError, json } from "../helpers/http";
import { intakeBody } from "../helpers/intakes";
import type { OwnerBusiness } from "../helpers/oauth";
import { receiverBox } from "../helpers/receiver";
import { verifyWebhookSignature } from "../helpers/verify-signature";
import { subscribe } from "../helpers/webhooks";

/*
 * A partner developer alone with the sandbox (docs/guides/sandbox.md), as they would go: create a sandbox business
 * with one unauthenticated request, subscribe, emit events and receive them verified, read what they describe, play
 * the owner in the dashboard to switch an intake and an action on, run the intake to a delivered intake.completed and
 * call the action; and what is refused on the way.
 */

type Sandbox = { business_id: string; api_key: string; owner_email: string; owner_password: string };
type Envelope = { id: string; event: string; sandbox?: boolean; data: Record<string, { id: number } & object> };

describe("a partner developer's first hour in a sandbox", async () => {
  const created = await call("/api/sandbox/businesses", { method: "POST", body: { name: "Journey Salon" } });
  await expect(created).toHaveStatus(201);
  const sandbox = await json<Sandbox>(created);
  const key = sandbox.api_key;
  const box = receiverBox("sandbox-journey");
  const endpoint = await subscribe(key, box.url("/hooks"), ["*", "intake.completed"]);
  const owner = { owner: { email: sandbox.owner_email, password: sandbox.owner_password } } as OwnerBusiness;

  /** The delivered envelope of event `id`, verified with the endpoint's secret. */
  const delivered = async (id: string) => {
    const request = await vi.waitFor(
      async () => {
        const found = (await box.recorded()).find((each) => JSON.parse(each.body).id === id);
        if (!found) throw new Error(`${id} not delivered yet`);
        return found;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(
      await verifyWebhookSignature(request.body, request.headers["x-service-signature"] ?? "", endpoint.secret),
    ).toBe(true);
    return JSON.parse(request.body) as Envelope;
  };
  const emit = async (event: string) => {
    const response = await call("/api/v1/sandbox/events", { key, method: "POST", body: { event } });
    await expect(response).toHaveStatus(201);
    const { events } = await json<{ events: Array<{ id: string; event: string }> }>(response);
    const emitted = events.find((each) => each.event === event);
    return delivered(emitted?.id ?? "");
  };

  it("gets a test key of a sandbox business with demo bookings, orders and knowledge", async () => {
    expect(key).toMatch(/^sk_test_[a-z0-9]+_/);
    const me = await json<{ id: string; name: string }>(await call("/api/v1/me", { key }));
    expect(me).toMatchObject({ id: sandbox.business_id, name: "Journey Salon", sandbox: true });
    for (const path of ["/api/v1/appointments", "/api/v1/orders", "/api/v1/knowledge"]) {
      const { data } = await json<{ data: unknown[] }>(await call(path, { key }));
      expect(data.length, path).toBeGreaterThan(0);
    }
  });

  it("triggers booking.created and order.ready, receives them verified, and reads what they describe", async () => {
    const booked = await emit("booking.created");
    expect(booked.sandbox).toBe(true);
    const booking = await json(await call(`/api/v1/appointments/${booked.data.booking?.id}`, { key }));
    expect(booking).toEqual(booked.data.booking);
    const ready = await emit("order.ready");
    expect(ready).toMatchObject({ sandbox: true, data: { order: { status: "ready_for_pickup" } } });
    const order = await json(await call(`/api/v1/orders/${ready.data.order?.id}`, { key }));
    expect(order).toEqual(ready.data.order);
  });

  it("registers an intake, has the owner approve it in the dashboard, and runs it to a delivered intake.completed", async () => {
    const intake = await json<{ id: number }>(
      await call("/api/v1/intakes", { key, method: "POST", body: intakeBody() }),
    );
    const jar = await signedIn(owner);
    await expect(await approveIntake(jar, intake.id)).toHaveStatus(303);
    const answers = { full_name: "Noor Haddad", email: "noor@example.com", budget: "Over 20k" };
    const ran = await call(`/api/v1/sandbox/intakes/${intake.id}/conversations`, {
      key,
      method: "POST",
      body: { answers },
    });
    await expect(ran).toHaveStatus(201);
    const { response_id } = await json<{ response_id: number }>(ran);
    const completed = await vi.waitFor(
      async () => {
        const found = (await box.recorded())
          .map((each) => JSON.parse(each.body) as Envelope & { data: { response_id?: number } })
          .find((each) => each.event === "intake.completed" && each.data.response_id === response_id);
        if (!found) throw new Error("intake.completed not delivered yet");
        return found;
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(completed.sandbox).toBe(true);
    await delivered(completed.id);
    const responses = await json<{ data: Array<{ id: number }> }>(
      await call(`/api/v1/intakes/${intake.id}/responses`, { key }),
    );
    expect(responses.data.map((each) => each.id)).toContain(response_id);
  });

  it("registers an action, has the owner switch it on in the dashboard, and calls it as the Secretary would", async () => {
    const actionBox = receiverBox("sandbox-journey-action");
    const action = await registerAction(key, "check_stock", {
      url: actionBox.url("/ok"),
      parameters: { type: "object", properties: { sku: { type: "string", description: "Code" } }, required: [] },
    });
    const jar = await signedIn(owner);
    await expect(await switchActionOn(jar, action.id)).toHaveStatus(303);
    const response = await call(`/api/v1/sandbox/actions/${action.id}/calls`, {
      key,
      method: "POST",
      body: { arguments: { sku: "SHAMPOO-250" } },
    });
    await expect(response).toHaveStatus(200);
    expect(await json(response)).toMatchObject({ call: { status: "success" }, result: { content: '{"ok":true}' } });
    const [request] = await actionBox.arrived(1);
    expect(JSON.parse(request?.body ?? "{}")).toMatchObject({ arguments: { sku: "SHAMPOO-250" } });
  });

  it("refuses a live key on the sandbox routes (403), and a test key on a live business (401)", async () => {
    const live = await createBusiness();
    await expectError(
      await call("/api/v1/sandbox/events", { key: live.apiKey, method: "POST", body: { event: "booking.created" } }),
      403,
      /test key/,
      { code: "forbidden" },
    );
    const testKeyOfLive = await createApiKey(live.business.id, { test: true });
    await expectError(await call("/api/v1/me", { key: testKeyOfLive.apiKey }), 401, /only on a sandbox business/, {
      code: "invalid_credential",
    });
  });
});
