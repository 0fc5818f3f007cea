import type { ActionParameters, IntakeField } from "../../db/schema";
import { type IdentityKind, identityQuestionsOf } from "../intakes/question-detection";

/*
 * What the owner reviews when a partner changed a switched-on action (docs/decisions.md, Changes to a switched-on
 * action): the description and each parameter against the version the owner approved, as the intake change view
 * shows questions, naming every parameter that asks who the customer is.
 */

type Parameter = ActionParameters["properties"][string];
type ParameterProperty = "type" | "description" | "enum" | "required";

export type ParameterChange =
  | { change: "added"; name: string; parameter: Parameter; required: boolean }
  | { change: "removed"; name: string; parameter: Parameter }
  | {
      change: "changed";
      name: string;
      properties: Array<{ property: ParameterProperty; before: unknown; after: unknown }>;
    };

/** A parameter that asks who the customer is (full name, home address, date of birth), found as for intake questions. */
export type IdentityParameter = { name: string; asks: IdentityKind[] };

export type ActionChange = {
  description: { before: string; after: string } | null;
  parameters: ParameterChange[];
  /** Of the parameters added or changed, those that ask who the customer is. */
  identityParameters: IdentityParameter[];
};

type Version = { description: string; parameters: ActionParameters };

const isRequired = (parameters: ActionParameters, name: string) => (parameters.required ?? []).includes(name);

/** A parameter read as an intake question reads: its name and description as the question's id and label. */
const asQuestion = (name: string, parameter: Parameter): IntakeField => ({
  id: name,
  label: parameter.description,
  type: parameter.type === "string" ? "text" : "number",
  required: false,
});

function propertyChanges(before: Version["parameters"], after: Version["parameters"], name: string) {
  const was = before.properties[name] as Parameter;
  const is = after.properties[name] as Parameter;
  const values = (parameters: ActionParameters, parameter: Parameter) => ({
    type: parameter.type,
    description: parameter.description,
    enum: parameter.enum ?? null,
    required: isRequired(parameters, name),
  });
  const old = values(before, was);
  const now = values(after, is);
  return (["type", "description", "enum", "required"] as const)
    .filter((property) => JSON.stringify(old[property]) !== JSON.stringify(now[property]))
    .map((property) => ({ property, before: old[property], after: now[property] }));
}

/**
 * The change from the approved version to the current one, or null when they say the same (a partner may PATCH an
 * action back to what was approved). Parameters are matched by name: in the current order each one added or changed,
 * then the removed ones in their old order.
 */
export function actionChange(approved: Version, current: Version): ActionChange | null {
  const parameters: ParameterChange[] = [];
  const reviewed: IntakeField[] = [];
  for (const [name, parameter] of Object.entries(current.parameters.properties)) {
    if (!Object.hasOwn(approved.parameters.properties, name)) {
      parameters.push({ change: "added", name, parameter, required: isRequired(current.parameters, name) });
      reviewed.push(asQuestion(name, parameter));
      continue;
    }
    const properties = propertyChanges(approved.parameters, current.parameters, name);
    if (properties.length === 0) continue;
    parameters.push({ change: "changed", name, properties });
    reviewed.push(asQuestion(name, parameter));
  }
  for (const [name, parameter] of Object.entries(approved.parameters.properties)) {
    if (!Object.hasOwn(current.parameters.properties, name)) parameters.push({ change: "removed", name, parameter });
  }
  const description =
    approved.description === current.description ? null : { before: approved.description, after: current.description };
  if (!description && parameters.length === 0) return null;
  const identityParameters = identityQuestionsOf(reviewed).map(({ id, asks }) => ({ name: id, asks }));
  return { description, parameters, identityParameters };
}
