import { describe, expect, it } from "vitest";
import type { IntakeField } from "../../src/db/schema";
import { checkAnswer, parseDate, proofOf } from "../../src/domain/intakes/answers";
import { switchIntakeOn } from "../../src/domain/intakes/owner-decisions";
import { deps } from "../helpers/dependencies";
import { createBusiness } from "../helpers/fixtures";
import { json } from "../helpers/http";
import { createIntake, runtimeIntake } from "../helpers/intakes";

const field = (type: IntakeField["type"], extra: Partial<IntakeField> = {}): IntakeField => ({
  id: "q",
  label: "Question?",
  type,
  required: true,
  ...extra,
});

describe("answers by field type (docs/guides/intakes.md, Answers)", () => {
  it.each([
    ["text", "  Mo Ali ", "Mo Ali"],
    ["text", "é".repeat(200), "é".repeat(200)],
    ["textarea", "Line one\nLine two", "Line one\nLine two"],
    ["number", "42", "42"],
    ["number", "-3.5", "-3.5"],
    ["number", "2,5", "2.5"],
    ["number", " 1 200 ", "1200"],
    ["email", "Ana@Example.COM", "Ana@example.com"],
    ["phone", "+31 6 12345678", "+31612345678"],
    ["phone", "0031 6 1234 5678", "+31612345678"],
    ["phone", "+1 (415) 555-2671", "+14155552671"],
    ["date", "2026-12-24", "2026-12-24"],
    ["date", "24/12/2026", "2026-12-24"],
    ["date", "1.3.2027", "2027-03-01"],
    ["date", "29-02-2028", "2028-02-29"],
    ["date", "24 December 2026", "2026-12-24"],
    ["date", "Dec 24, 2026", "2026-12-24"],
    ["date", "1st March 2027", "2027-03-01"],
  ] as const)("accepts a %s answer %j as %j", (type, raw, value) => {
    expect(checkAnswer(field(type), raw)).toEqual({ ok: true, value });
  });

  it.each([
    ["text", "", "The answer is empty."],
    ["text", "   ", "The answer is empty."],
    ["text", "é".repeat(201), "A short answer is one line of at most 200 characters."],
    ["text", "two\nlines", "A short answer is one line of at most 200 characters."],
    ["textarea", "x".repeat(4001), "The answer can be at most 4000 characters long."],
    ["number", "ten", "The answer must be a number."],
    ["number", "1e5", "The answer must be a number."],
    ["number", "1.2.3", "The answer must be a number."],
    ["email", "ana@", "The answer must be an email address."],
    ["email", "ana example.com", "The answer must be an email address."],
    ["email", "ana@localhost", "The answer must be an email address."],
    ["phone", "0612345678", "The answer must be a phone number with its country code, such as +31 6 12345678."],
    ["phone", "612345678", "The answer must be a phone number with its country code, such as +31 6 12345678."],
    ["phone", "+31 6", "The answer must be a phone number with its country code, such as +31 6 12345678."],
    ["phone", "call me", "The answer must be a phone number with its country code, such as +31 6 12345678."],
    ["date", "2026-02-30", "The answer must be a real date, such as 2026-12-24."],
    ["date", "31/04/2026", "The answer must be a real date, such as 2026-12-24."],
    ["date", "29/02/2027", "The answer must be a real date, such as 2026-12-24."],
    ["date", "tomorrow", "The answer must be a real date, such as 2026-12-24."],
    ["date", "13/13/2026", "The answer must be a real date, such as 2026-12-24."],
  ] as const)("rejects a %s answer %j", (type, raw, reason) => {
    expect(checkAnswer(field(type), raw)).toEqual({ ok: false, reason });
  });

  it("matches a select answer case-insensitively and stores the option's own text", () => {
    const select = field("select", { options: ["Small van", "Large van"] });
    expect(checkAnswer(select, "  large VAN ")).toEqual({ ok: true, value: "Large van" });
    expect(checkAnswer(select, "Medium")).toEqual({
      ok: false,
      reason: "The answer must be one of: Small van, Large van.",
    });
  });

  it("parses nothing that is not a date", () => {
    expect(parseDate("24 Decembr 2026")).toBeUndefined();
    expect(parseDate("2026/12/24")).toBeUndefined();
  });
});

describe("proof (docs/guides/intakes.md, Proof)", () => {
  const phone = field("phone");
  const email = field("email");

  it.each([
    ["whatsapp", "+31612345678", { phone: "+31 6 12345678" }, "verified"],
    ["sms", "+31612345678", { phone: "+31612345678" }, "verified"],
    ["sms", "+31612345678", { phone: "+31699999999" }, "stated"],
    ["telegram", "+31612345678", { phone: "+31612345678" }, "stated"],
    ["whatsapp", "+31612345678", {}, "stated"],
  ] as const)("a phone answer on %s is %s", (channel, value, proven, proof) => {
    expect(proofOf(phone, value, channel, proven)).toBe(proof);
  });

  it.each([
    ["email", "ana@example.com", { email: "ANA@example.com" }, "verified"],
    ["email", "ana@example.com", { email: "bo@example.com" }, "stated"],
    ["chat_page", "ana@example.com", { email: "ana@example.com" }, "stated"],
  ] as const)("an email answer on %s is %s", (channel, value, proven, proof) => {
    expect(proofOf(email, value, channel, proven)).toBe(proof);
  });

  it("gives no proof to other types", () => {
    expect(proofOf(field("text"), "x", "email", { email: "x" })).toBeUndefined();
  });
});

/*
 * docs/intakes.md, "Number answers": a number written with thousands separators or a decimal comma is read as the
 * customer meant it, or asked again with a reason; never stored as another number. Through the runtime's HTTP
 * mirror, as the Secretary sends it.
 */
describe("number answers with separators (POST /internal/v1/businesses/{id}/conversations/{cid}/intake/answers)", async () => {
  const { business, apiKey } = await createBusiness();
  // The name stays unanswered, so the run never completes and each case is one answer to `amount`.
  const intake = await createIntake(apiKey, {
    fields: [
      { id: "full_name", label: "What is your name?", type: "text", required: true },
      { id: "amount", label: "How much?", type: "number", required: true },
    ],
  });
  await switchIntakeOn(deps, business.id, intake.id);

  type State = { answers: Array<{ id: string; value: string }>; rejected: Array<{ id: string; reason: string }> };
  async function answerAmount(amount: string): Promise<State> {
    const cid = `conv-number-${crypto.randomUUID()}`;
    const runtime = runtimeIntake(business);
    const started = await runtime.start(cid, { intake_id: intake.id, channel: "whatsapp", customer: {} });
    await expect(started).toHaveStatus(201);
    const response = await runtime.answer(cid, { amount });
    await expect(response).toHaveStatus(200);
    return json<State>(response);
  }

  it.each([
    ["1,000", "1000", "a thousands comma"],
    ["1,000,000", "1000000", "thousands commas"],
    ["1.000.000", "1000000", "thousands dots (more than one group: no decimal point repeats)"],
    ["1 000", "1000", "a thousands space"],
    ["1\u00A0000\u00A0000", "1000000", "no-break spaces"],
    ["1\u202F000", "1000", "a narrow no-break space"],
    ["1'000", "1000", "a Swiss apostrophe"],
    ["1,000.50", "1000.5", "a thousands comma and a decimal point"],
    ["1.000,50", "1000.5", "a thousands dot and a decimal comma"],
    ["1 000,5", "1000.5", "a thousands space and a decimal comma"],
    ["12,5", "12.5", "a decimal comma"],
    ["1,00", "1", "a decimal comma before two digits"],
    ["0,500", "0.5", "a comma after 0, which no thousands group starts with"],
    ["0.500", "0.5", "a dot after 0"],
    ["1234.567", "1234.567", "a dot after four digits, which no thousands group has"],
    ["1.25", "1.25", "a decimal point"],
    ["-1,250", "-1250", "a negative number with a thousands comma"],
    ["\u22123,5", "-3.5", "the minus sign U+2212"],
    ["+7", "7", "a plus sign"],
    ["12345678901234567890", "12345678901234567890", "more digits than a double holds, kept exactly"],
  ])("reads %j as %j (%s)", async (amount, value) => {
    const state = await answerAmount(amount);
    expect(state.rejected).toEqual([]);
    expect(state.answers).toEqual([expect.objectContaining({ id: "amount", value })]);
  });

  it.each([
    ["1.000", "1000", "1"],
    ["12.500", "12500", "12.5"],
    ["-2.250", "-2250", "-2.25"],
  ])("asks again for %j, naming both readings: %s or %s", async (amount, thousands, decimal) => {
    const state = await answerAmount(amount);
    expect(state.answers).toEqual([]);
    expect(state.rejected).toEqual([
      {
        id: "amount",
        reason: `The answer "${amount}" could be ${thousands} (a dot between thousands) or ${decimal} (a decimal point): ask the customer which they mean.`,
      },
    ]);
  });

  it.each([
    ["1,00,000", "groups of two"],
    ["1,000,5", "a comma between thousands and as the decimal mark"],
    ["1.000.5", "a last group of one"],
    ["1,000 000", "two different thousands separators"],
    ["12 5", "a space that sets off no group of three"],
    ["1 000 00", "a last group of two"],
    ["1e5", "an exponent"],
    ["1,000€", "a currency"],
    [".5", "no digit before the point"],
  ])("asks again for %j (%s): not a number", async (amount) => {
    const state = await answerAmount(amount);
    expect(state.answers).toEqual([]);
    expect(state.rejected).toEqual([{ id: "amount", reason: "The answer must be a number." }]);
  });
});
