import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createBusiness } from "../helpers/fixtures";
import { call, expectError, json, RUNTIME } from "../helpers/http";

describe("PUT /internal/v1/businesses/{id}/plan (the billing side)", async () => {
  const { business, apiKey } = await createBusiness({ plan: "pro", active: true });
  const setPlan = (body: unknown, id = business.id, headers: Record<string, string> = RUNTIME) =>
    call(`/internal/v1/businesses/${id}/plan`, { method: "PUT", body, headers });

  it("lapses a plan, which closes the partner API with 403, and reactivates it", async () => {
    const lapsed = await setPlan({ plan: "pro", active: false });
    await expect(lapsed).toHaveStatus(200);
    expect(await json(lapsed)).toEqual({
      id: business.id,
      handle: business.handle,
      name: business.name,
      currency: "EUR",
      country: "NL",
      plan: "pro",
      plan_active: false,
    });
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(403);

    await expect(await setPlan({ plan: "business", active: true })).toHaveStatus(200);
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(200);
  });

  it("moves a business to the free plan, which the API does not include", async () => {
    await expect(await setPlan({ plan: "free", active: true })).toHaveStatus(200);
    await expect(await call("/api/v1/orders", { key: apiKey })).toHaveStatus(403);
    await setPlan({ plan: "pro", active: true });
  });

  it.each([
    [
      { plan: "gold", active: true },
      'The field "plan" must be one of "free", "pro", "business".',
      "parameter_invalid",
      "plan",
    ],
    [{ plan: "pro" }, 'The field "active" is required.', "parameter_missing", "active"],
    [{ plan: "pro", active: "yes" }, 'The field "active" must be a boolean.', "parameter_invalid", "active"],
    [
      { plan: "pro", active: true, business_id: "x" },
      'The request body has unknown key "business_id".',
      "parameter_invalid",
      "business_id",
    ],
    [[], "The request body must be an object.", "invalid_request", undefined],
  ] as const)("refuses %j with 400 and the reason", async (body, error, code, param) => {
    await expectError(await setPlan(body), 400, error, { code, param });
  });

  it("answers 404 for an unknown business and 400 for an id that is not one", async () => {
    await expectError(
      await setPlan({ plan: "pro", active: true }, crypto.randomUUID()),
      404,
      "No business has that id.",
      {
        code: "not_found",
        param: undefined,
      },
    );
    await expectError(
      await setPlan({ plan: "pro", active: true }, "not-a-uuid"),
      400,
      'The path parameter "id" must be a business id (a UUID).',
      { code: "parameter_invalid", param: "id" },
    );
  });

  it.each([
    ["no token", {}, "authentication_required"],
    ["a wrong token", { Authorization: "Bearer wrong-token" }, "invalid_credential"],
    ["a partner's API key", { Authorization: `Bearer ${apiKey}` }, "invalid_credential"],
  ] as const)("refuses %s with 401 (%s)", async (_case, headers, code) => {
    const response = await setPlan({ plan: "free", active: false }, business.id, headers);
    await expectError(response, 401, "The runtime token is missing or not valid.", {
      code,
      param: undefined,
    });
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(200);
  });

  it("is the same as the RPC method setPlan of the RuntimeApi entrypoint, with refusals as values", async () => {
    const runtime = exports.RuntimeApi;
    expect(await runtime.setPlan(business.id, { plan: "business", active: false })).toMatchObject({
      ok: true,
      value: { id: business.id, plan: "business", plan_active: false },
    });
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(403);
    expect(await runtime.setPlan(business.id, { plan: "gold", active: true })).toEqual({
      ok: false,
      status: 400,
      code: "parameter_invalid",
      param: "plan",
      error: 'The field "plan" must be one of "free", "pro", "business".',
    });
    expect(await runtime.setPlan(crypto.randomUUID(), { plan: "pro", active: true })).toEqual({
      ok: false,
      status: 404,
      code: "not_found",
      error: "No business has that id.",
    });
    await runtime.setPlan(business.id, { plan: "pro", active: true });
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(200);
  });
});
