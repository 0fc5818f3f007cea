import { describe, expect, it } from "vitest";
import { COMPLETION_GUARDS, endedRun, WaitingCompletion } from "../../src/domain/intakes/completion-guards";

/* The guards of a run's exactly-once completion that live in the conversation's Durable Object. */
describe("an intake run's completion guards (src/domain/intakes/completion-guards.ts)", () => {
  it("names four guards", () => {
    expect(Object.keys(COMPLETION_GUARDS)).toEqual([
      "endedRun",
      "waitingCompletion",
      "oneResponsePerRun",
      "unchangedIntake",
    ]);
  });

  it("takes a completed or no_delivery run as ended, and no other", () => {
    expect(endedRun({ status: "completed" })).toBe(true);
    expect(endedRun({ status: "no_delivery" })).toBe(true);
    for (const status of ["started", "stopped", "dropped"] as const) expect(endedRun({ status })).toBe(false);
    expect(endedRun(undefined)).toBe(false);
  });

  it("lets a call that arrives during a completion join it, and none after it settled, even by failing", async () => {
    const waiting = new WaitingCompletion<string>();
    let release: (answer: string) => void = () => {};
    const first = waiting.run(() => new Promise((resolve) => (release = resolve)));
    expect(waiting.current).toBeDefined();
    const joined = waiting.current;
    release("done");
    expect(await first).toBe("done");
    expect(await joined).toBe("done");
    expect(waiting.current).toBeUndefined();
    await expect(waiting.run(() => Promise.reject(new Error("D1 unavailable")))).rejects.toThrow("D1 unavailable");
    expect(waiting.current).toBeUndefined();
  });
});
