import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { createBusiness } from "../helpers/fixtures";
import { call, expectError } from "../helpers/http";

/** docs/operations.md, Rotating RUNTIME_TOKEN: the new token and, until it is removed, the one before it. */
const NEW = "runtime-token-new-0123456789abcdef";
const OLD = "runtime-token-old-0123456789abcdef";

let log: MockInstance<typeof console.log>;
beforeEach(() => {
  log = vi.spyOn(console, "log").mockImplementation(() => {});
});
afterEach(() => log.mockRestore());

/** The `principalId` of each request line written so far. */
const tokensLogged = () =>
  log.mock.calls
    .map(([line]) => JSON.parse(String(line)) as { kind: string; principal: string | null; principalId: number })
    .filter((line) => line.kind === "request")
    .map((line) => [line.principal, line.principalId]);

describe("rotating the runtime token without a refused request", async () => {
  const { business } = await createBusiness();
  const context = (token: string | undefined, bindings: { RUNTIME_TOKEN?: string; RUNTIME_TOKEN_PREVIOUS?: string }) =>
    call(`/internal/v1/businesses/${business.id}/context?channel=whatsapp`, {
      headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
      bindings,
    });

  it("accepts the new token and the previous one while both are set, and logs which one each request used", async () => {
    const overlap = { RUNTIME_TOKEN: NEW, RUNTIME_TOKEN_PREVIOUS: OLD };
    await expect(await context(NEW, overlap)).toHaveStatus(200);
    await expect(await context(OLD, overlap)).toHaveStatus(200);
    expect(tokensLogged()).toEqual([
      ["runtime", 1],
      ["runtime", 2],
    ]);
  });

  it.each([
    ["a wrong token during the overlap", "wrong-token", { RUNTIME_TOKEN: NEW, RUNTIME_TOKEN_PREVIOUS: OLD }],
    ["no token during the overlap", undefined, { RUNTIME_TOKEN: NEW, RUNTIME_TOKEN_PREVIOUS: OLD }],
    ["the previous token once it is removed", OLD, { RUNTIME_TOKEN: NEW, RUNTIME_TOKEN_PREVIOUS: undefined }],
    ["an empty bearer against an empty previous token", "", { RUNTIME_TOKEN: NEW, RUNTIME_TOKEN_PREVIOUS: "" }],
    ["the previous token when the current one is unset", OLD, { RUNTIME_TOKEN: "", RUNTIME_TOKEN_PREVIOUS: OLD }],
  ])("refuses %s with 401", async (_case, token, bindings) => {
    // No bearer at all is a missing credential; anything else sent is an invalid one (docs/errors.md).
    const code = token === undefined || token === "" ? "authentication_required" : "invalid_credential";
    await expectError(await context(token, bindings), 401, "The runtime token is missing or not valid.", {
      code,
      param: undefined,
    });
    expect(tokensLogged()).toEqual([[null, null]]);
  });
});
