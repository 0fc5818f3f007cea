import { describe, expect, it } from "vitest";
import type { IntakeField } from "../src/db/schema";
import { checkAnswer, parseDate, proofOf } from "../src/domain/intakes/answers";

const field = (type: IntakeField["type"], extra: Partial<IntakeField> = {}): IntakeField => ({
  id: "q",
  label: "Question?",
  type,
  required: true,
  ...extra,
});

describe("answers by field type (spec: Accepted answers by type)", () => {
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

describe("proof (spec: Answer)", () => {
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
