import type { ActionParameters } from "../../db/schema";

/*
 * An action's parameters in words, for the owner, who is not an engineer (docs/architecture.md, the owner's
 * dashboard): the raw JSON Schema stays behind "Technical details".
 */

export type Parameter = ActionParameters["properties"][string] & { name: string; required: boolean };

/** The parameters in the partner's order, each with whether it is required. */
export function parametersOf(parameters: ActionParameters): Parameter[] {
  const required = parameters.required ?? [];
  return Object.entries(parameters.properties).map(([name, definition]) => ({
    ...definition,
    name,
    required: required.includes(name),
  }));
}

const KINDS: Record<Parameter["type"], string> = {
  string: "text",
  integer: "a whole number",
  number: "a number",
  boolean: "yes or no",
};

/** A value as the owner reads it: yes/no for a boolean, the text or number itself otherwise. */
export const valueInWords = (value: string | number | boolean) =>
  typeof value === "boolean" ? (value ? "yes" : "no") : String(value);

/** What the parameter takes: one of its allowed values when it has an enum, else its kind. */
const kindInWords = (parameter: Parameter) =>
  parameter.enum ? `one of: ${parameter.enum.map(valueInWords).join(", ")}` : KINDS[parameter.type];

/** The short list of an action's parameters: name, what it is, required or optional, and what it takes. */
export function ParameterList(props: { parameters: ActionParameters }) {
  const parameters = parametersOf(props.parameters);
  return (
    <>
      {parameters.length === 0 ? (
        <p>This action takes no parameters.</p>
      ) : (
        <ul data-testid="parameters">
          {parameters.map((parameter) => (
            <li>
              <code>{parameter.name}</code>: {parameter.description} ({parameter.required ? "required" : "optional"};{" "}
              {kindInWords(parameter)})
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>Technical details</summary>
        <pre>{JSON.stringify(props.parameters, null, 2)}</pre>
      </details>
    </>
  );
}
