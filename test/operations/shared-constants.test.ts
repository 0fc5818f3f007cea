import { describe, expect, it } from "vitest";
import { PLANS } from "../../src/db/schema";
import { MAX_ACTIVE_KEYS } from "../../src/domain/access/api-keys";
import { API_KEY_PREFIX } from "../../src/domain/access/principals";
import { PASSWORD_ITERATIONS } from "../../src/lib/password";
import sharedConstants from "../../src/shared-constants.json";

// The seed (scripts/seed.mjs) runs on Node and cannot import TypeScript: it reads these values from the JSON file.
describe("the constants the Worker shares with the seed", () => {
  it("agree with the Worker's own", () => {
    expect(sharedConstants.PLANS).toEqual([...PLANS]);
    expect(sharedConstants.API_KEY_PREFIX).toBe(API_KEY_PREFIX);
    expect(API_KEY_PREFIX).toBe("sk_live_");
    expect(sharedConstants.MAX_ACTIVE_KEYS).toBe(MAX_ACTIVE_KEYS);
    expect(MAX_ACTIVE_KEYS).toBe(10);
    expect(sharedConstants.PASSWORD_ITERATIONS).toBe(PASSWORD_ITERATIONS);
    expect(PASSWORD_ITERATIONS).toBe(100_000);
  });
});
