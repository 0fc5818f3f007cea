import type { ActionParameters } from "../../db/schema";
import { invalid } from "../../lib/api-error";
import { checkAnswer } from "../intakes/answers";
import { type ContactKind, contactAskedFor } from "../intakes/question-detection";

/*
 * An intake may ask for an email address or a phone number; an action never does (docs/decisions.md, Calls): not by a
 * parameter at registration, not by a value at call time.
 * Both use the intakes' own rules, so that what counts as asking for, or being, an email address or a phone number is
 * decided in one place (the owner's approval screen of an intake names the same wording).
 */

const CONTACT_NAMES: Record<ContactKind, string> = { email: "an email address", phone: "a phone number" };

/** `customerPhone` → `customer Phone`: the words of a parameter name written in camel case. */
const camelCaseWords = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1 $2");

/**
 * Refuses (400, naming the parameter) a parameter whose name or description asks for an email address or a phone
 * number, by the wording that intake approval detects.
 */
export function assertNoContactParameters(parameters: ActionParameters) {
  for (const [name, definition] of Object.entries(parameters.properties)) {
    const kind = contactAskedFor([name, camelCaseWords(name), definition.description]);
    if (kind) {
      throw invalid(
        `The field "parameters.properties.${name}" asks for ${CONTACT_NAMES[kind]}: an action may not ask for contact details (an intake may).`,
        `parameters.properties.${name}`,
      );
    }
  }
}

/**
 * Why an argument may not be sent, when its value is an email address or a phone number (the call is then
 * `rejected`): a value an intake would accept as the answer to an email or a phone question. So a phone number
 * counts with its country code only: a bare string of digits is an order number or a product code as often.
 */
export function contactArgumentProblem(name: string, value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const kind = (["email", "phone"] as const).find(
    (type) => checkAnswer({ id: name, label: name, type, required: true }, value).ok,
  );
  return kind && `"${name}" is ${CONTACT_NAMES[kind]}, which actions do not receive`;
}
