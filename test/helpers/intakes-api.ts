import { expect } from "vitest";
import type { ErrorCode } from "../../src/lib/error-codes";
import { expectErrorBody, json } from "./http";

// Bodies and checks for registering intakes (POST and PATCH /api/v1/intakes) in test/intakes/.

export const NOT_FOUND = "No intake with that id exists for this credential.";

/** A question with `overrides`; required by default so that a list of one is valid. */
export const question = (overrides: Record<string, unknown> = {}) => ({
  id: "q",
  label: "Question?",
  type: "text",
  required: true,
  ...overrides,
});

/** `count` valid questions q0, q1, ... (the first one required). */
export const questions = (count: number) =>
  Array.from({ length: count }, (_, i) => question({ id: `q${i}`, required: i === 0 }));

export const select = (options: unknown, overrides: Record<string, unknown> = {}) =>
  question({ id: "pick", type: "select", required: false, options, ...overrides });

/** Before the question at index 1: a valid first question, so that paths name index 1. */
export const second = (field: Record<string, unknown>) => ({ fields: [question(), field] });

export const chars = (count: number, unit = "a") => unit.repeat(count);
export const name = (length: number) => `n${"a".repeat(length - 1)}`;
export const EMOJI = "😀";

/**
 * A 400 of intake validation naming `field` (as `field` and `param`), or `null` for the body as a whole (no `param`);
 * its `code` is `code` when given, else a `parameter_` one for a field and `invalid_request` for none.
 */
export async function expectInvalid(response: Response, field: string | null, sentence?: RegExp, code?: ErrorCode) {
  await expect(response).toHaveStatus(400);
  const body = await json(response);
  expectErrorBody(response, body);
  // The intake error's `field`, and `param` naming the same member (docs/errors.md).
  expect(body.field).toBe(field);
  expect(body.param).toBe(field ?? undefined);
  if (code !== undefined) expect(body.code).toBe(code);
  else expect(body.code).toEqual(field === null ? "invalid_request" : expect.stringMatching(/^parameter_/));
  expect(body.error).toMatch(/^The .+\.$/);
  if (field !== null) expect(body.error).toContain(`"${field}"`);
  if (sentence) expect(body.error).toMatch(sentence);
}
