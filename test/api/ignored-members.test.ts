import { describe, expect, it } from "vitest";
import { createBusiness } from "../helpers/fixtures";
import { call, json } from "../helpers/http";
import { subscribe } from "../helpers/webhooks";

/*
 * Keys the API does not know are ignored, by every operation, and the answer names them in `Ignored-Members`
 * (docs/guides/errors.md, Unknown members): a misspelt member is seen, not silently lost.
 */
const HOOK = "https://partner.example/hooks";
const ignored = (response: Response) => response.headers.get("Ignored-Members");

describe("unknown body members: ignored, and named in Ignored-Members", async () => {
  const { apiKey } = await createBusiness();
  const sandbox = await createBusiness({ sandbox: true });

  it("names a misspelt `event` on POST /webhooks, which subscribes to every event as if it were absent", async () => {
    const response = await call("/api/v1/webhooks", {
      key: apiKey,
      method: "POST",
      body: { url: HOOK, event: ["order.created"] },
    });
    await expect(response).toHaveStatus(201);
    expect(ignored(response)).toBe("event");
    expect((await json<{ events: string[] }>(response)).events).toEqual(["*"]);
  });

  it("names `evnt` on POST /webhooks/{id}/test", async () => {
    const endpoint = await subscribe(apiKey, HOOK);
    const response = await call(`/api/v1/webhooks/${endpoint.id}/test`, {
      key: apiKey,
      method: "POST",
      body: { evnt: "order.created" },
    });
    await expect(response).toHaveStatus(202);
    expect(ignored(response)).toBe("evnt");
  });

  it("accepts PATCH /webhooks/{id} with unknown members, changing what it knows", async () => {
    const endpoint = await subscribe(apiKey, HOOK);
    const response = await call(`/api/v1/webhooks/${endpoint.id}`, {
      key: apiKey,
      method: "PATCH",
      body: { description: "orders", event: ["order.created"], status: "disabled", secret: "whsec_mine" },
    });
    await expect(response).toHaveStatus(200);
    expect(ignored(response)).toBe("event, status, secret");
    const record = await json<{ description: string; events: string[]; status: string }>(response);
    expect(record).toMatchObject({ description: "orders", events: ["*"], status: "enabled" });
  });

  it("names nested members by their path, as `param` does, and writes other characters as code points", async () => {
    const response = await call("/api/v1/actions", {
      key: apiKey,
      method: "POST",
      body: {
        name: "check_slot",
        title: "Check a slot",
        description: "Checks whether a slot is free on a given day.",
        url: "https://partner.example/actions/slot",
        parameters: { type: "object", properties: { day: { type: "string", description: "The day", format: "date" } } },
        café: true,
      },
    });
    await expect(response).toHaveStatus(201);
    expect(ignored(response)).toBe("parameters.properties.day.format, caf\\u{e9}");
  });

  it("names them on the sandbox's events", async () => {
    const response = await call("/api/v1/sandbox/events", {
      key: sandbox.apiKey,
      method: "POST",
      body: { event: "lead.created", evnt: "booking.created" },
    });
    await expect(response).toHaveStatus(201);
    expect(ignored(response)).toBe("evnt");
  });

  it("names them on sandbox creation, which creates the business", async () => {
    const response = await call("/api/sandbox/businesses", {
      method: "POST",
      body: { country: "US", plan: "free" },
    });
    await expect(response).toHaveStatus(201);
    expect(ignored(response)).toBe("plan");
  });

  it("cuts the list at 1,000 characters, however many members were ignored", async () => {
    const unknown = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`unknown_member_${i}`, i]));
    const response = await call("/api/v1/webhooks", {
      key: apiKey,
      method: "POST",
      body: { url: HOOK, ...unknown },
    });
    await expect(response).toHaveStatus(201);
    const header = ignored(response) ?? "";
    expect(header).toHaveLength(1000);
    expect(header.startsWith("unknown_member_0, unknown_member_1, ")).toBe(true);
    expect(header.endsWith("...")).toBe(true);
  });

  it("sends no header when every member was known, or when there is no body", async () => {
    const endpoint = await subscribe(apiKey, HOOK);
    const known = await call(`/api/v1/webhooks/${endpoint.id}/test`, {
      key: apiKey,
      method: "POST",
      body: { event: "ping" },
    });
    await expect(known).toHaveStatus(202);
    expect(ignored(known)).toBeNull();
    const empty = await call(`/api/v1/webhooks/${endpoint.id}/rotate-secret`, { key: apiKey, method: "POST" });
    await expect(empty).toHaveStatus(200);
    expect(ignored(empty)).toBeNull();
  });
});
