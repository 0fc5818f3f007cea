import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/http";

// The tests' status assertion (test/helpers/status-matcher.ts): a wrong status fails with the answer's error sentence
// beside it, so a failing run says why the Worker refused, not only that it did.
describe("the status assertion of the tests", () => {
  it("names both statuses and the error sentence when the status is not the one expected", async () => {
    const response = await call("/api/v1/no-such-resource");
    const { error } = await json<{ error: string }>(response.clone());
    expect(error).toMatch(/\S/);
    const failure = await expect(response)
      .toHaveStatus(201)
      .catch((thrown: Error) => thrown);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain("expected status 201, got 404");
    expect((failure as Error).message).toContain(JSON.stringify(error));
  });

  it("reads nothing of an answer whose status matches, and leaves its body to the test", async () => {
    const response = await call("/api/v1/no-such-resource");
    await expect(response).toHaveStatus(404);
    expect(response.bodyUsed).toBe(false);
    await expect(response).not.toHaveStatus(201);
  });

  it("says so when the body was already read, and cuts a long body", async () => {
    const read = new Response("gone", { status: 410 });
    await read.text();
    await expect(expect(read).toHaveStatus(200)).rejects.toThrow(
      "expected status 200, got 410: (its body was already read)",
    );
    const long = new Response("x".repeat(2_000), { status: 500 });
    await expect(expect(long).toHaveStatus(200)).rejects.toThrow(`got 500: ${"x".repeat(500)}…`);
  });
});
