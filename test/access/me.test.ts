import { describe, expect, it } from "vitest";
import { createBusiness } from "../helpers/fixtures";
import { call, json } from "../helpers/http";

describe("GET /api/v1/me", () => {
  it("answers the business of the key with exactly its five fields (docs/guides/getting-started.md, The first call)", async () => {
    const { business, apiKey } = await createBusiness({ name: "Bella Hair Studio" });
    const response = await call("/api/v1/me", { key: apiKey });
    await expect(response).toHaveStatus(200);
    expect(response.headers.get("Content-Type")).toContain("application/json");
    expect(await json(response)).toEqual({
      id: business.id,
      handle: business.handle,
      name: "Bella Hair Studio",
      currency: "EUR",
      country: "NL",
    });
  });

  it("answers each business its own record", async () => {
    const first = await createBusiness();
    const second = await createBusiness();
    const body = await json(await call("/api/v1/me", { key: second.apiKey }));
    expect(body.id).toBe(second.business.id);
    expect(body.id).not.toBe(first.business.id);
  });
});
