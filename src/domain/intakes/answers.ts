import { parsePhoneNumberFromString } from "libphonenumber-js";
import type { Answer, IntakeField } from "../../db/schema";
import { characterCount } from "../../lib/text";
import type { Channel } from "../../names-and-limits";
import { choiceKey } from "../../schemas/intake-fields";

/** A checked answer: the value to store (as text, normalised), or why it was not accepted. */
export type CheckedAnswer = { ok: true; value: string } | { ok: false; reason: string };

const SHORT_TEXT_CHARS = 200;
const LONG_TEXT_CHARS = 4000;

const MONTHS = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december",
];

function isoDate(year: number, month: number, day: number): string | undefined {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return date.toISOString().slice(0, 10);
}

const monthNumber = (name: string) => {
  const index = MONTHS.findIndex((month) => name.length >= 3 && month.startsWith(name));
  return index < 0 ? undefined : index + 1;
};

/**
 * A date as customers write it, normalised to `YYYY-MM-DD`: `2026-12-24`, day first with `/`, `.` or `-` (`24/12/2026`:
 * the businesses are mostly outside the US; docs/decisions.md, The intake conversation), or with the month's
 * English name (`24 December 2026`, `Dec 24, 2026`). Impossible dates (`2026-02-30`) are refused, never rolled over.
 */
export function parseDate(text: string): string | undefined {
  const value = text.trim().toLowerCase().replace(/,/g, " ").replace(/\s+/g, " ");
  let match = /^(\d{4})-(\d{1,2})-(\d{1,2})$/.exec(value);
  if (match) return isoDate(Number(match[1]), Number(match[2]), Number(match[3]));
  match = /^(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})$/.exec(value);
  if (match) return isoDate(Number(match[3]), Number(match[2]), Number(match[1]));
  match = /^(\d{1,2})(?:st|nd|rd|th)? ([a-z]+)\.? (\d{4})$/.exec(value);
  if (match) {
    const month = monthNumber(match[2] ?? "");
    return month ? isoDate(Number(match[3]), month, Number(match[1])) : undefined;
  }
  match = /^([a-z]+)\.? (\d{1,2})(?:st|nd|rd|th)? (\d{4})$/.exec(value);
  if (match) {
    const month = monthNumber(match[1] ?? "");
    return month ? isoDate(Number(match[3]), month, Number(match[2])) : undefined;
  }
  return undefined;
}

/** A phone number in E.164, only when it carries its country code (docs/guides/intakes.md, Answers). */
export function parsePhone(text: string): string | undefined {
  const trimmed = text.trim().replace(/^00/, "+");
  if (!trimmed.startsWith("+")) return undefined;
  const phone = parsePhoneNumberFromString(trimmed);
  return phone?.isValid() ? phone.number : undefined;
}

/** One sign: `-`, `+`, or the minus sign U+2212 that some keyboards put in. */
const SIGNED = /^([-+\u2212]?)(.*)$/su;
/** A lone `.` or `,` between digits: `12,5`, `1.25`, `1,000`. */
const ONE_SEPARATOR = /^(\d+)([.,])(\d+)$/;
/**
 * Digits in groups of three after a first group of 1 to 3 (not starting with 0), every group set off by one and the
 * same separator (comma, dot, space, no-break or thin space, apostrophe), then a decimal part after a `.` or `,`.
 */
const GROUPED = /^([1-9]\d{0,2})([,. \u00A0\u2009\u202F'\u2019])(\d{3}(?:\2\d{3})*)(?:([.,])(\d+))?$/u;

/** The shortest text of a decimal, as `String(Number(...))` writes it, but exact at any length (no `1e+21`). */
function decimalText(negative: boolean, whole: string, fraction: string): string {
  const digits = whole.replace(/^0+(?=\d)/, "");
  const decimals = fraction.replace(/0+$/, "");
  const text = decimals ? `${digits}.${decimals}` : digits;
  return negative && /[1-9]/.test(text) ? `-${text}` : text;
}

const NOT_A_NUMBER: CheckedAnswer = { ok: false, reason: "The answer must be a number." };

/**
 * A number as customers write it, stored with a decimal point and no separators, or a reason to ask again: never a
 * reading the customer may not have meant. Separators and decimal marks are read as docs/intakes.md, "Number
 * answers" tabulates; `1.000` (a thousand in most of Europe, one in English) is asked again, naming both readings.
 */
export function parseNumber(text: string): CheckedAnswer {
  const [, sign = "", body = ""] = SIGNED.exec(text) ?? [];
  const negative = sign !== "" && sign !== "+";
  if (/^\d+$/.test(body)) return { ok: true, value: decimalText(negative, body, "") };
  const lone = ONE_SEPARATOR.exec(body);
  if (lone) {
    const [, whole = "", mark, fraction = ""] = lone;
    const thousandsLike = fraction.length === 3 && /^[1-9]\d{0,2}$/.test(whole);
    if (!thousandsLike) return { ok: true, value: decimalText(negative, whole, fraction) };
    if (mark === ",") return { ok: true, value: decimalText(negative, whole + fraction, "") };
    const asThousands = decimalText(negative, whole + fraction, "");
    const asDecimal = decimalText(negative, whole, fraction);
    return {
      ok: false,
      reason: `The answer "${text}" could be ${asThousands} (a dot between thousands) or ${asDecimal} (a decimal point): ask the customer which they mean.`,
    };
  }
  const grouped = GROUPED.exec(body);
  if (grouped) {
    const [, first = "", separator, groups = "", decimalMark, fraction = ""] = grouped;
    if (decimalMark === separator) return NOT_A_NUMBER;
    return { ok: true, value: decimalText(negative, first + groups.split(separator ?? "").join(""), fraction) };
  }
  return NOT_A_NUMBER;
}

const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** Each type's check, and its normalised text (docs/guides/intakes.md, Answers). */
export function checkAnswer(field: IntakeField, raw: string): CheckedAnswer {
  const text = raw.trim();
  if (text === "") return { ok: false, reason: "The answer is empty." };
  switch (field.type) {
    case "text":
      if (characterCount(text) > SHORT_TEXT_CHARS || /[\r\n]/.test(text)) {
        return { ok: false, reason: `A short answer is one line of at most ${SHORT_TEXT_CHARS} characters.` };
      }
      return { ok: true, value: text };
    case "textarea":
      if (characterCount(text) > LONG_TEXT_CHARS) {
        return { ok: false, reason: `The answer can be at most ${LONG_TEXT_CHARS} characters long.` };
      }
      return { ok: true, value: text };
    case "number":
      return parseNumber(text);
    case "email": {
      if (!EMAIL.test(text) || text.length > 254) return { ok: false, reason: "The answer must be an email address." };
      const [local, domain] = [text.slice(0, text.lastIndexOf("@")), text.slice(text.lastIndexOf("@") + 1)];
      return { ok: true, value: `${local}@${domain.toLowerCase()}` };
    }
    case "phone": {
      const phone = parsePhone(text);
      if (!phone) {
        return {
          ok: false,
          reason: "The answer must be a phone number with its country code, such as +31 6 12345678.",
        };
      }
      return { ok: true, value: phone };
    }
    case "date": {
      const date = parseDate(text);
      return date
        ? { ok: true, value: date }
        : { ok: false, reason: "The answer must be a real date, such as 2026-12-24." };
    }
    case "select": {
      const option = field.options?.find((choice) => choiceKey(choice) === choiceKey(text));
      if (!option) return { ok: false, reason: `The answer must be one of: ${field.options?.join(", ")}.` };
      return { ok: true, value: option };
    }
  }
}

/**
 * What the channel proved about the customer: the runtime's `customer: { phone?, email? }` when it starts an intake
 * (docs/decisions.md, The intake conversation).
 */
export type ProvenIdentity = { phone?: string; email?: string };

/**
 * An answer's `proof` (docs/guides/intakes.md, Proof): `verified` when it equals what the channel proved, `stated`
 * otherwise. Only WhatsApp and SMS prove a number and only email proves an address; the comparison is between
 * normalised values.
 */
export function proofOf(field: IntakeField, value: string, channel: Channel, proven: ProvenIdentity): Answer["proof"] {
  if (field.type === "phone") {
    const provenPhone = proven.phone ? parsePhone(proven.phone) : undefined;
    return (channel === "whatsapp" || channel === "sms") && provenPhone === value ? "verified" : "stated";
  }
  if (field.type === "email") {
    return channel === "email" && proven.email?.trim().toLowerCase() === value.toLowerCase() ? "verified" : "stated";
  }
  return undefined;
}
