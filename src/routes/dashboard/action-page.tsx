import type { Creator } from "../../domain/access/creators";
import type { ActionChange, ParameterChange } from "../../domain/actions/change-review";
import { reviewedVersion } from "../../domain/actions/owner-decisions";
import type { getAction } from "../../domain/actions/reads";
import { ParameterList } from "./action-parameters";
import { type Tested, TestForm, TestResult, type TypedValues } from "./action-test-form";
import { CreatedBy } from "./created-by";
import type { DashboardEnv } from "./dashboard-env";
import { IDENTITY_NAMES } from "./identity-names";
import { ButtonForm, Layout, OnOff } from "./layout";
import { When } from "./time-text";

type Detail = ReturnType<ReturnType<typeof getAction>["answer"]>;

/**
 * The owner's page of one connected action: what it is and calls, its parameters, a partner's change waiting for the
 * owner, switching it on (guarded by the version shown) or off, the Test form and its result, and the recent calls.
 */
export function ActionPage(props: {
  session: DashboardEnv["Variables"]["session"];
  action: Detail;
  change: ActionChange | null;
  creator: Creator;
  tested?: Tested;
  /** What the owner typed in the Test form, shown again with its result. */
  values?: TypedValues;
  problem?: string;
  /** Why switching on was refused: the action changed since the page the owner switched it on from. */
  changed?: string;
  /**
   * Off for its MCP server's sake: the server no longer lists the tool (`removed`), or lists it in a form that cannot
   * be an action (`unusable`); it cannot be switched on until the server lists it again as it may be.
   */
  unavailable?: "removed" | "unusable" | null;
}) {
  const { action, session } = props;
  return (
    <Layout title={action.title} session={session}>
      <section>
        <p>
          <OnOff enabled={action.enabled} /> <code>{action.name}</code> <CreatedBy creator={props.creator} />
        </p>
        <p>{action.description}</p>
        <p>
          {action.source === "mcp_server" ? "A tool of the MCP server" : "Calls"} <code>{action.url}</code>
        </p>
        <h2>Parameters</h2>
        <ParameterList parameters={action.parameters} />
        {props.changed && (
          <p class="error" data-testid="changed">
            {props.changed} It is shown above as it now is.
          </p>
        )}
        {props.change && <ChangeReview session={session} action={action} change={props.change} />}
        {action.enabled ? (
          <ButtonForm session={session} action={`/dashboard/actions/${action.id}/off`} label="Switch off" />
        ) : props.unavailable ? (
          <p class="error" data-testid="tool-removed">
            {props.unavailable === "removed"
              ? "Its MCP server no longer lists this tool, so it cannot be switched on until the server lists it again."
              : "Its MCP server lists this tool in a form that cannot be a connected action (see the server's tools), so it cannot be switched on until the server lists it as one again."}
          </p>
        ) : (
          <ButtonForm
            session={session}
            action={`/dashboard/actions/${action.id}/on`}
            label="Switch on"
            kind="primary"
            fields={{ reviewed: reviewedVersion(action) }}
          />
        )}
        <p>
          <a href={`/dashboard/actions/${action.id}/remove`}>Remove this action</a>
        </p>
      </section>
      <section>
        <h2>Test</h2>
        <TestForm session={session} actionId={action.id} parameters={action.parameters} values={props.values} />
        {props.problem && (
          <p class="error" data-testid="test-problem">
            {props.problem}
          </p>
        )}
        {props.tested && <TestResult tested={props.tested} />}
      </section>
      <section>
        <h2>Recent calls</h2>
        <table>
          {action.calls.map((call) => (
            <tr>
              <td>
                <When at={call.created_at} precision="second" />
              </td>
              <td>{call.status}</td>
              <td>{call.error ?? (call.http_status ? `HTTP ${call.http_status}` : "")}</td>
              <td>
                <code>{JSON.stringify(call.arguments)}</code>
              </td>
            </tr>
          ))}
        </table>
      </section>
    </Layout>
  );
}

const requiredness = (required: boolean) => (required ? "required" : "optional");

/** One parameter's change in words: added (with what it is), removed, or which of its properties changed. */
function parameterChangeText(change: ParameterChange): string {
  switch (change.change) {
    case "added":
      return `New parameter “${change.name}” (${change.parameter.type}, ${requiredness(change.required)}): “${change.parameter.description}”${change.parameter.enum ? `, one of ${change.parameter.enum.join(", ")}` : ""}`;
    case "removed":
      return `Removed parameter “${change.name}”`;
    case "changed":
      return `Changed “${change.name}”: ${change.properties.map((p) => `${p.property} ${JSON.stringify(p.before)} → ${JSON.stringify(p.after)}`).join("; ")}`;
  }
}

/**
 * A partner's change of a switched-on action, against the version the owner approved (docs/decisions.md, Changes to
 * a switched-on action): the description and each parameter, the parameters that ask who the customer is named, and
 * the owner's choice: accept it (guarded by the version shown here), or switch the action off.
 */
function ChangeReview(props: { session: DashboardEnv["Variables"]["session"]; action: Detail; change: ActionChange }) {
  const { change, action } = props;
  return (
    <div class="card warning" data-testid="action-change">
      <h2>Changed by the partner since you approved it</h2>
      <p>The Secretary keeps using the version you approved until you accept this change.</p>
      <ul>
        {change.description && (
          <li>
            Description: “{change.description.before}” → “{change.description.after}”
          </li>
        )}
        {change.parameters.map((parameter) => (
          <li>{parameterChangeText(parameter)}</li>
        ))}
      </ul>
      {change.identityParameters.length > 0 && (
        <p class="error" data-testid="identity-parameters">
          Asks who the customer is:{" "}
          {change.identityParameters
            .map(
              ({ name, asks }) =>
                `“${name}” asks for the customer's ${asks.map((kind) => IDENTITY_NAMES[kind]).join(" and ")}`,
            )
            .join("; ")}
          .
        </p>
      )}
      <ButtonForm
        session={props.session}
        action={`/dashboard/actions/${action.id}/accept`}
        label="Accept the change"
        kind="primary"
        fields={{ reviewed: reviewedVersion(action) }}
      />
    </div>
  );
}
