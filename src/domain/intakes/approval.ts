import { and, eq, not, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { apiKeys, type IntakeContent, type IntakeField, intakes, oauthGrants } from "../../db/schema";
import { conflict, forbidden } from "../../lib/errors";
import { isoNow } from "../../lib/time";
import { numericId } from "../../lib/validation";
import { contentOf, intakeNotFound, normalizeField, toIntakeObject } from "./registration";

/*
 * The owner's side of an intake (spec: States, Intake `enabled`; Contact details and approval). Only the owner
 * switches an intake on or off; these functions are for the dashboard and are scoped by the business alone, never
 * by a partner principal. The rules for contact details and identity questions are in docs/intakes.md.
 */

/**
 * Whether the key or app that registered the intake has been revoked or disconnected (spec: Intake `enabled`, "Key
 * revoked, or owner disconnects the app → false"). Written as SQL so that it can guard the switch-on in the same
 * statement as the write: a revocation that lands first always wins.
 */
const registeredByRevokedCredential = sql<boolean>`(exists (select 1 from ${apiKeys} where ${apiKeys.id} = ${intakes.apiKeyId} and ${apiKeys.revokedAt} is not null) or exists (select 1 from ${oauthGrants} where ${oauthGrants.id} = ${intakes.oauthGrantId} and ${oauthGrants.revokedAt} is not null))`;

const ofBusiness = (businessId: string, id: number) => and(eq(intakes.id, id), eq(intakes.businessId, businessId));

async function findBusinessIntake(db: Database, businessId: string, intakeId: string | number) {
  const id = numericId(String(intakeId));
  const found =
    id === undefined
      ? undefined
      : await db
          .select({ intake: intakes, revoked: sql<number>`${registeredByRevokedCredential}` })
          .from(intakes)
          .where(ofBusiness(businessId, id))
          .get();
  if (!found) throw intakeNotFound();
  return { intake: found.intake, credentialRevoked: Boolean(found.revoked) };
}

const revokedCredential = () =>
  forbidden(
    "The key or app that registered this intake has been revoked or disconnected, so the intake cannot be switched on.",
  );

const changedSinceReview = () =>
  conflict("The intake has changed since it was reviewed: review it again before switching it on.");

/**
 * The owner switches the intake on (spec: Intake `enabled`, false → true, after seeing every question and the
 * contact details). Records the approved version and its content, which later PATCHes are compared against.
 * `version`, when given, is the version the owner reviewed: a different current version is a 409, so an owner never
 * approves questions they have not seen. The write is guarded by the version it read and by the credential not being
 * revoked, in one statement, so neither a concurrent PATCH nor a concurrent revocation can be overtaken.
 */
export async function switchIntakeOn(
  db: Database,
  businessId: string,
  intakeId: string | number,
  options: { version?: number } = {},
) {
  const { intake, credentialRevoked } = await findBusinessIntake(db, businessId, intakeId);
  if (credentialRevoked) throw revokedCredential();
  if (options.version !== undefined && options.version !== intake.version) throw changedSinceReview();
  const [updated] = await db
    .update(intakes)
    .set({
      enabled: true,
      approvedVersion: intake.version,
      approvedContent: contentOf(intake),
      updatedAt: intake.enabled ? intake.updatedAt : isoNow(),
    })
    .where(
      and(ofBusiness(businessId, intake.id), eq(intakes.version, intake.version), not(registeredByRevokedCredential)),
    )
    .returning();
  if (updated) return toIntakeObject(updated);
  // Something got in between the read and the write: say what.
  const now = await findBusinessIntake(db, businessId, intake.id);
  if (now.credentialRevoked) throw revokedCredential();
  throw changedSinceReview();
}

/** The owner switches the intake off (spec: Intake `enabled`, true → false). An intake that is off stays as it is. */
export async function switchIntakeOff(db: Database, businessId: string, intakeId: string | number) {
  const { intake } = await findBusinessIntake(db, businessId, intakeId);
  if (!intake.enabled) return toIntakeObject(intake);
  const [updated] = await db
    .update(intakes)
    .set({ enabled: false, updatedAt: isoNow() })
    .where(and(ofBusiness(businessId, intake.id), eq(intakes.enabled, true)))
    .returning();
  return toIntakeObject(updated ?? (await findBusinessIntake(db, businessId, intake.id)).intake);
}

/** What the owner reviews before switching an intake on (spec: Contact details and approval; DESIGN.md, dashboard). */
export async function approvalSummary(db: Database, businessId: string, intakeId: string | number) {
  const { intake, credentialRevoked } = await findBusinessIntake(db, businessId, intakeId);
  const questions = intake.fields.map(normalizeField);
  return {
    intake: toIntakeObject(intake),
    version: intake.version,
    approvedVersion: intake.approvedVersion,
    registeredBy: { apiKeyId: intake.apiKeyId, oauthGrantId: intake.oauthGrantId, revoked: credentialRevoked },
    /** Every question, in the order the Secretary asks them. */
    questions,
    contactDetails: contactDetailsOf(questions),
    identityQuestions: identityQuestionsOf(questions),
    /** Null until the intake has been approved once; then what differs from the approved version (empty if nothing). */
    changes: intake.approvedContent
      ? changeList(intake.approvedContent, contentOf(intake), intake.approvedVersion ?? 0)
      : null,
  };
}

export type ApprovalSummary = Awaited<ReturnType<typeof approvalSummary>>;

/** Lower-case words of an id or a label, accents removed: "Date of Birth?" → ["date", "of", "birth"]. */
export function wordsOf(text: string): string[] {
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

export type ContactDetail = {
  id: string;
  label: string;
  kind: "email" | "phone";
  required: boolean;
  /** `type`: an `email` or `phone` question; `wording`: a free-text question whose id or label asks for one. */
  detectedBy: "type" | "wording";
};

/**
 * Spec, Contact details and approval: "names the contact details the partner will receive". Every `email` and
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
      const texts = textsOf(field);
      if (texts.some((words) => hasAny(words, EMAIL_WORDS)))
        details.push({ ...base, kind: "email", detectedBy: "wording" });
      else if (texts.some((words) => hasAny(words, PHONE_WORDS))) {
        details.push({ ...base, kind: "phone", detectedBy: "wording" });
      }
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

/** Spec: "full name". The id or label asks for a person's name (docs/intakes.md, Identity questions). */
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

/** Spec: "home address". */
function asksForAddress(words: string[]): boolean {
  if (hasAny(words, ADDRESS_WORDS)) return true;
  return words.some(
    (word, index) => (word === "address" || word === "addresses") && !NOT_HOME_ADDRESS.has(words[index - 1] ?? ""),
  );
}

const BIRTH_WORDS = ["birth", "birthday", "birthdate", "dob", "born", "date of birth"];

/** Spec: "date of birth". */
const asksForBirthDate = (words: string[]) => hasAny(words, BIRTH_WORDS);

/**
 * Spec, Contact details and approval: "any question that asks who the customer is (full name, home address, date
 * of birth)". Detected from each question's id and label (English words) and type; a rule errs on the side of
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

const QUESTION_PROPERTIES = ["label", "type", "required", "options", "help"] as const;
type QuestionProperty = (typeof QUESTION_PROPERTIES)[number];

export type QuestionChange =
  | { change: "added"; id: string; index: number; question: IntakeField }
  | { change: "removed"; id: string; index: number; question: IntakeField }
  | {
      change: "changed";
      id: string;
      index: number;
      properties: Array<{ property: QuestionProperty; before: unknown; after: unknown }>;
    }
  | { change: "moved"; id: string; from: number; to: number };

export type ChangeList = {
  /** The approved version the current one is compared with. */
  sinceVersion: number;
  title: { before: string; after: string } | null;
  description: { before: string; after: string } | null;
  questions: QuestionChange[];
};

/**
 * The change question by question (spec: Intake `enabled`, "dashboard shows the change question by question"):
 * questions are matched by id. In the order of the current list: each question added, changed (which properties,
 * before and after) and/or moved (old index → new index); then the removed ones, in their old order. "Moved" means
 * the question's place among the questions kept changed: the fewest moves that explain the new order, so adding or
 * removing a question does not make every later one "moved".
 */
export function changeList(approved: IntakeContent, current: IntakeContent, sinceVersion: number): ChangeList {
  const before = approved.fields.map(normalizeField);
  const after = current.fields.map(normalizeField);
  const oldIndex = new Map(before.map((field, index) => [field.id, index]));
  const newIds = new Set(after.map((field) => field.id));
  const kept = after.filter((field) => oldIndex.has(field.id)).map((field) => field.id);
  const staying = longestInOrder(kept.map((id) => oldIndex.get(id) ?? 0)).map((position) => kept[position]);
  const stayed = new Set(staying);

  const questions: QuestionChange[] = [];
  after.forEach((field, index) => {
    const from = oldIndex.get(field.id);
    const previous = from === undefined ? undefined : before[from];
    if (from === undefined || previous === undefined) {
      questions.push({ change: "added", id: field.id, index, question: field });
      return;
    }
    const properties = QUESTION_PROPERTIES.filter(
      (property) => JSON.stringify(previous[property] ?? null) !== JSON.stringify(field[property] ?? null),
    ).map((property) => ({ property, before: previous[property] ?? null, after: field[property] ?? null }));
    if (properties.length > 0) questions.push({ change: "changed", id: field.id, index, properties });
    if (!stayed.has(field.id)) questions.push({ change: "moved", id: field.id, from, to: index });
  });
  before.forEach((field, index) => {
    if (!newIds.has(field.id)) questions.push({ change: "removed", id: field.id, index, question: field });
  });

  return {
    sinceVersion,
    title: approved.title === current.title ? null : { before: approved.title, after: current.title },
    description:
      approved.description === current.description
        ? null
        : { before: approved.description, after: current.description },
    questions,
  };
}

/**
 * Positions of a longest strictly increasing subsequence of `values` (the questions that kept their relative
 * order). At most 12 questions, so the quadratic method is plenty. Of equally long ones, the first found is kept:
 * the questions that come first in the current list stay put (of two that swapped, the second one "moved").
 */
function longestInOrder(values: number[]): number[] {
  const length = values.map(() => 1);
  const previous = values.map(() => -1);
  for (let i = 0; i < values.length; i++) {
    for (let j = 0; j < i; j++) {
      if ((values[j] ?? 0) < (values[i] ?? 0) && (length[j] ?? 0) + 1 > (length[i] ?? 0)) {
        length[i] = (length[j] ?? 0) + 1;
        previous[i] = j;
      }
    }
  }
  let end = -1;
  for (let i = 0; i < values.length; i++) if (end === -1 || (length[i] ?? 0) > (length[end] ?? 0)) end = i;
  const positions: number[] = [];
  for (let i = end; i !== -1; i = previous[i] ?? -1) positions.unshift(i);
  return positions;
}
