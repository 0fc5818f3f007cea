import type { Context } from "hono";
import { Hono } from "hono";
import { type Database, database } from "../../db/client";
import { runRead } from "../../db/reads";
import type { Creator } from "../../domain/access/creators";
import { testAction } from "../../domain/actions/calls";
import type { ActionChange, ParameterChange } from "../../domain/actions/change-review";
import { actionCreator, listActionsForOwner } from "../../domain/actions/owner-actions";
import {
  acceptActionChange,
  actionNotFound,
  deleteAction,
  findAction,
  getAction,
  pendingChange,
  reviewedVersion,
  switchAction,
} from "../../domain/actions/registration";
import { type Enqueue, enqueueAfterAnswer } from "../../domain/webhooks/lifecycle";
import { ApiError } from "../../lib/errors";
import { outboundPolicy } from "../../lib/outbound";
import { idOrNotFound } from "../../lib/validation";
import { renderPage } from "../page-shell";
import { Confirmation } from "./confirmation";
import { CreatedBy } from "./created-by";
import type { DashboardEnv } from "./dashboard-env";
import { IDENTITY_NAMES } from "./identity-names";
import { ButtonForm, Csrf, Layout, OnOff } from "./layout";

/** The page's id as the domain takes it, or the 404 page. */
const actionId = (c: Context<DashboardEnv>) => idOrNotFound(c.req.param("id") ?? "", actionNotFound);

type Detail = ReturnType<ReturnType<typeof getAction>["answer"]>;
type Tested = Awaited<ReturnType<typeof testAction>>;

/** A refusal the action's page shows in place, above the action as it now is (any other error goes on). */
function refusalShownInPlace(error: unknown, status: 409 | 422): string {
  if (error instanceof ApiError && error.status === status) return error.message;
  throw error;
}

/** The action, the change of it waiting for the owner, and who registered it, read together (the action's page). */
async function actionWithCreator(db: Database, businessId: string, id: number) {
  const [action, row, creator] = await Promise.all([
    runRead(db, getAction(businessId, id)),
    findAction(db, businessId, id),
    actionCreator(db, businessId, id),
  ]);
  return { action, change: pendingChange(row), creator };
}

type ReviewedWrite = (
  db: Database,
  businessId: string,
  id: number,
  options: { reviewed: string; enqueue: Enqueue },
) => Promise<unknown>;

/**
 * The owner's approval of the version they reviewed (switching on, accepting a change): the form carries its digest,
 * and a 409 (the action changed since) shows the action again as it now is, saying so.
 */
async function reviewedWrite(c: Context<DashboardEnv>, write: ReviewedWrite) {
  const db = database(c.env.DB);
  const { business } = c.var.session;
  const id = actionId(c);
  const { reviewed } = await c.req.parseBody();
  try {
    await write(db, business.id, id, {
      reviewed: typeof reviewed === "string" ? reviewed : "",
      enqueue: enqueueAfterAnswer(c),
    });
  } catch (error) {
    const changed = refusalShownInPlace(error, 409);
    const shown = await actionWithCreator(db, business.id, id);
    return renderPage(c, 409, <ActionPage session={c.var.session} {...shown} changed={changed} />);
  }
  return c.redirect(`/dashboard/actions/${id}`, 303);
}

/**
 * Connected actions: review (description, url, parameters), Test, switch on/off, the 10 recent calls, and the
 * owner's removal of any action, whoever registered it (docs/architecture.md, Principals and owner sides).
 */
export const actionPages = new Hono<DashboardEnv>()
  .get("/actions", async (c) => {
    const session = c.var.session;
    const actions = await listActionsForOwner(database(c.env.DB), session.business.id);
    return renderPage(
      c,
      200,
      <Layout title="Connected actions" session={session}>
        {actions.length === 0 && <p>No app has registered an action.</p>}
        <table>
          {actions.map((action) => (
            <tr>
              <td>
                <a href={`/dashboard/actions/${action.id}`}>{action.title}</a> <code>{action.name}</code>
                <br />
                <CreatedBy creator={action.creator} />
              </td>
              <td>
                <OnOff enabled={action.enabled} />
              </td>
            </tr>
          ))}
        </table>
      </Layout>,
    );
  })
  .get("/actions/:id", async (c) => {
    const shown = await actionWithCreator(database(c.env.DB), c.var.session.business.id, actionId(c));
    return renderPage(c, 200, <ActionPage session={c.var.session} {...shown} />);
  })
  .post("/actions/:id/test", async (c) => {
    const db = database(c.env.DB);
    const { business } = c.var.session;
    const id = actionId(c);
    const body = await c.req.parseBody();
    let sample: Record<string, unknown> = {};
    try {
      const parsed = JSON.parse(typeof body.arguments === "string" && body.arguments.trim() ? body.arguments : "{}");
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error("not an object");
      sample = parsed;
    } catch {
      const problem = 'The sample arguments must be a JSON object, such as {"date": "2026-12-24"}.';
      const shown = await actionWithCreator(db, business.id, id);
      return renderPage(c, 400, <ActionPage session={c.var.session} {...shown} problem={problem} />);
    }
    let tested: Tested | undefined;
    let problem: string | undefined;
    try {
      tested = await testAction(outboundPolicy(c.env), db, business, id, sample);
    } catch (error) {
      // Sample arguments without a required parameter make no call, as for the Secretary.
      problem = refusalShownInPlace(error, 422);
    }
    const shown = await actionWithCreator(db, business.id, id);
    return renderPage(
      c,
      problem ? 422 : 200,
      <ActionPage session={c.var.session} {...shown} tested={tested} problem={problem} />,
    );
  })
  // Both guarded by the version the owner reviewed: a PATCH that landed meanwhile is shown, not approved unseen.
  .post("/actions/:id/on", (c) =>
    reviewedWrite(c, (db, businessId, id, options) => switchAction(db, businessId, id, true, options)),
  )
  .post("/actions/:id/accept", (c) => reviewedWrite(c, acceptActionChange))
  .post("/actions/:id/off", async (c) => {
    const id = actionId(c);
    await switchAction(database(c.env.DB), c.var.session.business.id, id, false, { enqueue: enqueueAfterAnswer(c) });
    return c.redirect(`/dashboard/actions/${id}`, 303);
  })
  .get("/actions/:id/remove", async (c) => {
    const session = c.var.session;
    const { action, creator } = await actionWithCreator(database(c.env.DB), session.business.id, actionId(c));
    return renderPage(
      c,
      200,
      <Layout title={`Remove the action “${action.title}”?`} session={session}>
        <p>
          <code>{action.name}</code> <CreatedBy creator={creator} />
        </p>
        <Confirmation
          session={session}
          stops={
            <ul>
              <li>The Secretary no longer calls it, from now on.</li>
              <li>Its secret stops signing, and its call history is deleted with it.</li>
            </ul>
          }
          remains={
            <p>
              Every other action. The partner can register it again with its key or app, if it still has access; it is
              then off until you switch it on.
            </p>
          }
          action={`/dashboard/actions/${action.id}/remove`}
          confirm="Remove the action"
          back={`/dashboard/actions/${action.id}`}
        />
      </Layout>,
    );
  })
  .post("/actions/:id/remove", async (c) => {
    await deleteAction(database(c.env.DB), c.var.session.business.id, actionId(c));
    return c.redirect("/dashboard/actions", 303);
  });

function ActionPage(props: {
  session: DashboardEnv["Variables"]["session"];
  action: Detail;
  change: ActionChange | null;
  creator: Creator;
  tested?: Tested;
  problem?: string;
  /** Why switching on was refused: the action changed since the page the owner switched it on from. */
  changed?: string;
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
          Calls <code>{action.url}</code>
        </p>
        <h2>Parameters</h2>
        <pre>{JSON.stringify(action.parameters, null, 2)}</pre>
        {props.changed && (
          <p class="error" data-testid="changed">
            {props.changed} It is shown above as it now is.
          </p>
        )}
        {props.change && <ChangeReview session={session} action={action} change={props.change} />}
        {action.enabled ? (
          <ButtonForm session={session} action={`/dashboard/actions/${action.id}/off`} label="Switch off" />
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
        <form method="post" action={`/dashboard/actions/${action.id}/test`}>
          <Csrf session={session} />
          <label for="arguments">Sample arguments (JSON)</label>
          <textarea id="arguments" name="arguments" rows={3}>
            {"{}"}
          </textarea>
          <p>
            <button type="submit">Test</button>
          </p>
        </form>
        {props.problem && <p class="error">{props.problem}</p>}
        {props.tested && (
          <div class="card" data-testid="test-result">
            <p>
              Result: <strong>{props.tested.call.status}</strong>
              {props.tested.call.http_status !== null && ` (HTTP ${props.tested.call.http_status})`}
              {props.tested.call.error && ` — ${props.tested.call.error}`}
            </p>
            {props.tested.result !== null && <pre>{props.tested.result.content}</pre>}
          </div>
        )}
      </section>
      <section>
        <h2>Recent calls</h2>
        <table>
          {action.calls.map((call) => (
            <tr>
              <td>{call.created_at.replace("T", " ").slice(0, 19)}</td>
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
