import type { IntakeField } from "../../db/schema";

/**
 * What the owner is told before switching an intake on (docs/guides/intakes.md, Approval by the owner): the questions
 * that ask for contact details the partner will receive, and those that ask who the customer is. The rules, with their
 * examples, are in docs/intakes.md (Contact details, Identity questions).
 */

/** Lower-case words of an id or a label, accents removed: "Date of Birth?" → ["date", "of", "birth"]. */
function wordsOf(text: string): string[] {
  return text
    .normalize("NFKD")
    .replace(/\p{M}/gu, "")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

/** Whether the words contain the phrase (consecutive words). */
function hasPhrase(words: string[], phrase: string): boolean {
  return ` ${words.join(" ")} `.includes(` ${phrase} `);
}

const hasAny = (words: string[], phrases: readonly string[]) => phrases.some((phrase) => hasPhrase(words, phrase));

/** The texts a rule reads: the question's id and its label, each as words. */
const textsOf = (field: IntakeField) => [wordsOf(field.id.replaceAll("_", " ")), wordsOf(field.label)];

const EMAIL_WORDS = ["email", "e mail", "email address", "mail address"] as const;
const PHONE_WORDS = ["phone", "telephone", "mobile", "cell", "cellphone", "tel", "whatsapp", "phone number"] as const;

export type ContactKind = "email" | "phone";

/**
 * The contact detail that texts ask for by their wording, if any: an email address, else a phone number. The one
 * detection, shared with connected actions, whose parameters may not ask for either (docs/guides/connected-actions.md,
 * Registering an action).
 */
export function contactAskedFor(texts: string[]): ContactKind | undefined {
  const words = texts.map(wordsOf);
  if (words.some((each) => hasAny(each, EMAIL_WORDS))) return "email";
  if (words.some((each) => hasAny(each, PHONE_WORDS))) return "phone";
  return undefined;
}

export type ContactDetail = {
  id: string;
  label: string;
  kind: ContactKind;
  required: boolean;
  /** `type`: an `email` or `phone` question; `wording`: a free-text question whose id or label asks for one. */
  detectedBy: "type" | "wording";
};

/**
 * The contact details the partner will receive (docs/intakes.md, Contact details): every `email` and
 * `phone` question, and also a free-text question (`text`, `textarea`) whose id or label asks for an email address
 * or a phone number, so that typing a question as `text` does not hide it from the owner.
 */
export function contactDetailsOf(fields: IntakeField[]): ContactDetail[] {
  const details: ContactDetail[] = [];
  for (const field of fields) {
    const base = { id: field.id, label: field.label, required: field.required };
    if (field.type === "email" || field.type === "phone") {
      details.push({ ...base, kind: field.type, detectedBy: "type" });
    } else if (field.type === "text" || field.type === "textarea") {
      const kind = contactAskedFor([field.id, field.label]);
      if (kind) details.push({ ...base, kind, detectedBy: "wording" });
    }
  }
  return details;
}

export type IdentityKind = "full_name" | "home_address" | "date_of_birth";

export type IdentityQuestion = { id: string; label: string; asks: IdentityKind[] };

/** Words before "name" that make it a person's name ("first name"), unlike "company name" or "pet name". */
const PERSON_NAME_QUALIFIERS = new Set([
  "full",
  "first",
  "last",
  "given",
  "family",
  "middle",
  "maiden",
  "legal",
  "your",
  "my",
  "customer",
  "customers",
  "client",
  "clients",
  "contact",
  "guest",
  "patient",
  "person",
  "applicant",
  "owner",
]);
const NAME_WORDS = ["surname", "surnames", "forename", "forenames", "firstname", "lastname", "fullname", "who are you"];

/** The id or label asks for a person's name (docs/intakes.md, Identity questions). */
function asksForName(words: string[]): boolean {
  if (hasAny(words, NAME_WORDS)) return true;
  return words.some((word, index) => {
    if (word !== "name" && word !== "names") return false;
    // "customer's name" is the words customer, s, name: the qualifier is the word before the "s".
    const before = words[index - 1] === "s" ? words[index - 2] : words[index - 1];
    if (before !== undefined) return PERSON_NAME_QUALIFIERS.has(before);
    // "name", "Name?", "Name (as on your passport)"; not "Name of your company".
    return words[index + 1] !== "of";
  });
}

/** Words before "address" that make it something other than where someone lives. */
const NOT_HOME_ADDRESS = new Set(["email", "mail", "e", "ip", "web", "website", "wallet", "mac", "server"]);
const ADDRESS_WORDS = [
  "street",
  "postcode",
  "postcodes",
  "post code",
  "postal code",
  "zip",
  "zipcode",
  "zip code",
  "city",
  "town",
  "house number",
  "housenumber",
  "apartment",
  "residence",
  "where do you live",
  "where you live",
];

/** The id or label asks for a home address (docs/intakes.md, Identity questions). */
function asksForAddress(words: string[]): boolean {
  if (hasAny(words, ADDRESS_WORDS)) return true;
  return words.some(
    (word, index) => (word === "address" || word === "addresses") && !NOT_HOME_ADDRESS.has(words[index - 1] ?? ""),
  );
}

const BIRTH_WORDS = ["birth", "birthday", "birthdate", "dob", "born", "date of birth"];

/** The id or label asks for a date of birth (docs/intakes.md, Identity questions). */
const asksForBirthDate = (words: string[]) => hasAny(words, BIRTH_WORDS);

/**
 * Every question that asks who the customer is: a full name, a home address, a date of birth (docs/intakes.md,
 * Identity questions). Detected from each question's id and label (English words) and type; a rule errs on the side of
 * naming a question, since the owner sees every question anyway and a false alarm costs a glance.
 */
export function identityQuestionsOf(fields: IntakeField[]): IdentityQuestion[] {
  const found: IdentityQuestion[] = [];
  for (const field of fields) {
    const texts = textsOf(field);
    const asks: IdentityKind[] = [];
    const freeText = field.type === "text" || field.type === "textarea";
    if (freeText && texts.some(asksForName)) asks.push("full_name");
    if (freeText && texts.some(asksForAddress)) asks.push("home_address");
    if (field.type !== "email" && field.type !== "phone" && texts.some(asksForBirthDate)) asks.push("date_of_birth");
    if (asks.length > 0) found.push({ id: field.id, label: field.label, asks });
  }
  return found;
}
