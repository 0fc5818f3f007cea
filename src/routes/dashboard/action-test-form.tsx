import type { ActionParameters } from "../../db/schema";
import type { testAction } from "../../domain/actions/calls";
import { withHiddenShown } from "../../lib/text";
import { type Parameter, parametersOf, valueInWords } from "./action-parameters";
import type { DashboardEnv } from "./dashboard-env";
import { Csrf } from "./layout";

/*
 * The owner's Test of an action, built from its parameters (docs/architecture.md, the owner's dashboard): one
 * labelled control per parameter, read back into typed arguments on the server (the dashboard has no scripts), and
 * the answer shown in words with the raw JSON behind a <details>.
 */

export type Tested = Awaited<ReturnType<typeof testAction>>;
/** What the owner typed, by parameter name, as the form sent it: the redrawn form shows it again. */
export type TypedValues = Record<string, string>;

const fieldName = (name: string) => `arguments.${name}`;
const fieldId = (name: string) => `argument-${name}`;
/** The choices of a select: the enum, or yes and no for a boolean; none for a free field. */
const choicesOf = (parameter: Parameter) => parameter.enum ?? (parameter.type === "boolean" ? [true, false] : null);

/**
 * The form's fields turned into the arguments, by each parameter's type: an empty field is left out (a required one
 * is then refused by the Test as missing, as for the Secretary), a choice becomes its typed value, a number is
 * parsed. A number field that holds no number is a problem in words, and no call is made.
 */
export function formArguments(
  parameters: ActionParameters,
  body: Record<string, unknown>,
): { values: TypedValues; arguments: Record<string, unknown>; problem?: string } {
  const values: TypedValues = {};
  const args: Record<string, unknown> = {};
  for (const parameter of parametersOf(parameters)) {
    const sent = body[fieldName(parameter.name)];
    const raw = typeof sent === "string" ? sent : "";
    values[parameter.name] = raw;
    if (raw.trim() === "") continue;
    const choice = choicesOf(parameter)?.find((value) => valueInWords(value) === raw);
    if (choice !== undefined) {
      args[parameter.name] = choice;
    } else if (parameter.type === "string") {
      args[parameter.name] = raw;
    } else if (parameter.type === "boolean") {
      return { values, arguments: args, problem: `“${parameter.name}” must be yes or no.` };
    } else {
      const number = Number(raw.trim());
      const whole = parameter.type === "integer";
      if (!Number.isFinite(number) || (whole && !Number.isInteger(number))) {
        const kind = whole ? "a whole number" : "a number";
        return { values, arguments: args, problem: `“${parameter.name}” must be ${kind}, and “${raw}” is not.` };
      }
      // A value outside the enum is sent as typed: the Test records it as refused, as for the Secretary.
      args[parameter.name] = number;
    }
  }
  return { values, arguments: args };
}

/** One parameter's control: a select for a choice, a number input (whole numbers in steps of 1), else text. */
function ParameterInput(props: { parameter: Parameter; value: string }) {
  const { parameter, value } = props;
  const common = { id: fieldId(parameter.name), name: fieldName(parameter.name), required: parameter.required };
  const choices = choicesOf(parameter);
  if (choices) {
    return (
      <select {...common}>
        <option value="">{parameter.required ? "Choose…" : "Not given"}</option>
        {choices.map((choice) => (
          <option value={valueInWords(choice)} selected={value === valueInWords(choice)}>
            {valueInWords(choice)}
          </option>
        ))}
      </select>
    );
  }
  if (parameter.type === "string") return <input type="text" {...common} value={value} />;
  const step = parameter.type === "integer" ? "1" : "any";
  return <input type="number" step={step} inputmode={step === "1" ? "numeric" : "decimal"} {...common} value={value} />;
}

/** The Test form: one labelled control per parameter, showing what the owner typed last. */
export function TestForm(props: {
  session: DashboardEnv["Variables"]["session"];
  actionId: number;
  parameters: ActionParameters;
  values?: TypedValues;
}) {
  const parameters = parametersOf(props.parameters);
  return (
    <form method="post" action={`/dashboard/actions/${props.actionId}/test`} data-testid="test-form">
      <Csrf session={props.session} />
      {parameters.length === 0 && <p>This action takes no parameters: Test calls it with none.</p>}
      {parameters.map((parameter) => (
        <>
          <label for={fieldId(parameter.name)}>
            {parameter.description}{" "}
            <span class="muted">
              ({parameter.name}, {parameter.required ? "required" : "optional"})
            </span>
          </label>
          <ParameterInput parameter={parameter} value={props.values?.[parameter.name] ?? ""} />
        </>
      ))}
      <p>
        <button type="submit">Test</button>
      </p>
    </form>
  );
}

/** An answer's value in words: text as it is, yes/no, a number, or the JSON of anything nested. */
const answerValue = (value: unknown) =>
  typeof value === "string" || typeof value === "number" || typeof value === "boolean"
    ? valueInWords(value)
    : JSON.stringify(value);

/** The action's answer readable: key: value lines for a JSON object, else its text; the raw JSON behind details. */
function ReadableAnswer(props: { content: string }) {
  let parsed: unknown;
  try {
    parsed = JSON.parse(props.content);
  } catch {
    parsed = props.content;
  }
  const isObject = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed);
  return (
    <>
      {isObject ? (
        <ul data-testid="answer">
          {Object.entries(parsed as Record<string, unknown>).map(([key, value]) => (
            <li>
              <strong>{withHiddenShown(key)}</strong>: {withHiddenShown(answerValue(value))}
            </li>
          ))}
        </ul>
      ) : (
        <p data-testid="answer">{withHiddenShown(answerValue(parsed))}</p>
      )}
      <details>
        <summary>Show the raw answer</summary>
        <pre data-testid="raw-answer">{withHiddenShown(props.content)}</pre>
      </details>
    </>
  );
}

const OUTCOMES: Record<Tested["call"]["status"], string> = {
  success: "It answered",
  error: "It failed",
  timeout: "It did not answer in time",
  rejected: "Not sent: the values do not fit the parameters",
};

/** The Test's result in words: how the call ended (with the status the call history shows), and its answer. */
export function TestResult(props: { tested: Tested }) {
  const { call, result, truncated } = props.tested;
  return (
    <div class="card" data-testid="test-result">
      <p>
        {OUTCOMES[call.status]}. Result: <strong>{call.status}</strong>
        {call.http_status !== null && ` (HTTP ${call.http_status})`}
      </p>
      {call.error && <p class="error">{call.error}</p>}
      {result !== null && <ReadableAnswer content={result.content} />}
      {truncated && <p class="muted">The answer is longer: the Secretary reads its first 4,000 characters.</p>}
    </div>
  );
}
