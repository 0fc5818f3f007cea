import type { ActionParameters } from "../../db/schema";
import { ApiError } from "../../lib/api-error";
import { contactArgumentProblem } from "./contact-details";

/*
 * The Secretary's arguments against the action's parameters. Names are looked up with `Object.hasOwn`, so that an
 * argument or parameter named like an Object property (`constructor`) is never mistaken for one (docs/architecture.md,
 * Everywhere). A parameter is never named so (registration refuses it: `isNotDataName`, src/lib/validation.ts), so an
 * argument named so is never a parameter and makes the call `rejected`.
 */

/** A required parameter is missing when its argument is absent, null or blank. */
function missingRequired(parameters: ActionParameters, args: Record<string, unknown>): string[] {
  return (parameters.required ?? []).filter((name) => {
    const value = Object.hasOwn(args, name) ? args[name] : undefined;
    return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
  });
}

/**
 * The Secretary asks the customer for a missing required parameter instead of calling
 * (docs/guides/connected-actions.md, The call history). A call without one is not a call (docs/decisions.md, Calls):
 * 422 naming every missing parameter, nothing sent, nothing recorded.
 */
export function assertRequiredArguments(parameters: ActionParameters, args: Record<string, unknown>) {
  const missing = missingRequired(parameters, args);
  if (missing.length === 0) return;
  const names = missing.map((name) => `"${name}"`).join(", ");
  const [only] = missing;
  throw new ApiError(
    "action_arguments_missing",
    missing.length === 1
      ? `The required parameter ${names} is missing: ask the customer for it instead of calling.`
      : `The required parameters ${names} are missing: ask the customer for them instead of calling.`,
    { param: missing.length === 1 ? `arguments.${only}` : undefined },
  );
}

/**
 * `rejected` when the Secretary's arguments do not fit the parameters (docs/guides/connected-actions.md, The call
 * history): a wrong type, a value outside the `enum`, an argument the flat schema does not name, or an email address
 * or a phone number, which an action never receives. Answers the first problem, or undefined.
 */
export function argumentProblem(parameters: ActionParameters, args: Record<string, unknown>): string | undefined {
  for (const [name, value] of Object.entries(args)) {
    const definition = Object.hasOwn(parameters.properties, name) ? parameters.properties[name] : undefined;
    if (!definition) return `"${name}" is not a parameter of this action`;
    const fits =
      definition.type === "string"
        ? typeof value === "string"
        : definition.type === "boolean"
          ? typeof value === "boolean"
          : typeof value === "number" &&
            Number.isFinite(value) &&
            (definition.type === "number" || Number.isInteger(value));
    if (!fits) return `"${name}" must be ${definition.type === "integer" ? "an integer" : `a ${definition.type}`}`;
    if (definition.enum && !definition.enum.includes(value as string | number | boolean)) {
      return `"${name}" must be one of ${definition.enum.map((v) => JSON.stringify(v)).join(", ")}`;
    }
    const contact = contactArgumentProblem(name, value);
    if (contact) return contact;
  }
  return undefined;
}
