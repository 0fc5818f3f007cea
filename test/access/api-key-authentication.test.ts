import { describe, expect, it } from "vitest";
import { API_KEY_PREFIX } from "../../src/domain/access/principals";
import { randomToken } from "../../src/lib/secrets";
import { createApiKey, createBusiness } from "../helpers/fixtures";
import { BASE, call, expectError } from "../helpers/http";

const PROTECTED = ["/api/v1/me", "/api/v1/appointments", "/api/v1/orders"];

describe("API key authentication (docs/decisions.md, Authentication and the plan)", () => {
  it.each(PROTECTED)("refuses %s without an Authorization header (401)", async (path) => {
    const response = await call(path);
    await expectError(response, 401, /API key is required/);
    expect(response.headers.get("WWW-Authenticate")).toBe(
      `Bearer realm="api", resource_metadata="${BASE}/.well-known/oauth-protected-resource/api/v1"`,
    );
  });

  it.each([
    ["another scheme", "Basic dXNlcjpwYXNz"],
    ["a bare key without the scheme", `${randomToken(API_KEY_PREFIX)}`],
    ["the scheme without a key", "Bearer "],
    ["two tokens", `Bearer ${randomToken(API_KEY_PREFIX)} extra`],
    ["a character a token never has", "Bearer sk_live_a,b"],
  ])("refuses a malformed header (%s) with 401", async (_case, header) => {
    const response = await call("/api/v1/me", { headers: { Authorization: header } });
    await expectError(
      response,
      401,
      "The Authorization header is malformed: it must be Bearer followed by an API key or an access token.",
    );
  });

  it.each([
    ["a key that does not exist", randomToken(API_KEY_PREFIX)],
    ["a key of a shape never issued", "sk_live_short"],
    ["a key naming a shard that does not exist", `sk_live_xx9_${"a".repeat(43)}`],
    ["a key with another prefix", randomToken("pk_live_")],
  ])("refuses a well-formed header with %s as a key not recognised (401), not as malformed", async (_case, key) => {
    await expectError(await call("/api/v1/me", { key }), 401, "The API key is not recognised.", {
      code: "invalid_credential",
    });
  });

  it("refuses a revoked key (401) while another key of the same business works", async () => {
    const { business, apiKey } = await createBusiness();
    const revoked = await createApiKey(business.id, { revoked: true });
    await expectError(await call("/api/v1/me", { key: revoked.apiKey }), 401, /revoked/);
    await expect(await call("/api/v1/me", { key: apiKey })).toHaveStatus(200);
  });

  it("takes a test key on its sandbox business, and refuses each kind of key on the other kind of business", async () => {
    const sandbox = await createBusiness({ sandbox: true });
    const live = await createBusiness();
    expect(sandbox.apiKey).toMatch(/^sk_test_/);
    await expect(await call("/api/v1/me", { key: sandbox.apiKey })).toHaveStatus(200);
    // Keys made for the other kind of business: a test key of a live business, a live key of a sandbox.
    const testOnLive = await createApiKey(live.business.id, { test: true });
    const liveOnSandbox = await createApiKey(sandbox.business.id, { test: false, shard: sandbox.shard });
    await expectError(await call("/api/v1/me", { key: testOnLive.apiKey }), 401, /works only on a sandbox business/, {
      code: "invalid_credential",
    });
    await expectError(await call("/api/v1/me", { key: liveOnSandbox.apiKey }), 401, /takes test keys/, {
      code: "invalid_credential",
    });
  });

  it("accepts the scheme name in any case, as RFC 6750 allows", async () => {
    const { apiKey } = await createBusiness();
    const response = await call("/api/v1/me", { headers: { Authorization: `bearer ${apiKey}` } });
    await expect(response).toHaveStatus(200);
  });
});

describe("the plan rule (docs/guides/getting-started.md, A credential: Pro or Business; a lapsed plan gives 403)", () => {
  it.each(PROTECTED)("answers 403 on %s for a lapsed Pro plan", async (path) => {
    const { apiKey } = await createBusiness({ plan: "pro", active: false });
    await expectError(await call(path, { key: apiKey }), 403, /lapsed/);
  });

  it("answers 403 for a lapsed Business plan", async () => {
    const { apiKey } = await createBusiness({ plan: "business", active: false });
    await expectError(await call("/api/v1/me", { key: apiKey }), 403, /lapsed/);
  });

  it("answers 403 for a business on the free plan", async () => {
    const { apiKey } = await createBusiness({ plan: "free", active: true });
    await expectError(await call("/api/v1/me", { key: apiKey }), 403, /does not include the API/);
  });

  it("lets an active Business plan in", async () => {
    const { apiKey } = await createBusiness({ plan: "business", active: true });
    await expect(await call("/api/v1/orders", { key: apiKey })).toHaveStatus(200);
  });
});
