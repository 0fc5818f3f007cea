import { Hono } from "hono";
import {
  type ApprovalSummary,
  approvalSummary,
  listBusinessIntakes,
  switchIntakeOff,
  switchIntakeOn,
} from "../../domain/intakes/owner-decisions";
import { latestResponses } from "../../domain/intakes/responses";
import { renderPage } from "../../pages/page-shell";
import type { DashboardEnv } from "./dashboard-env";
import { IDENTITY_NAMES } from "./identity-names";
import { intakeId, intakeRemovalPages } from "./intake-removal";
import { ButtonForm, Layout, OnOff } from "./layout";
import { When } from "./time-text";

/**
 * Intakes: the approval screen (docs/intakes.md, The approval summary: every question, the contact details the partner
 * will receive, any question that asks who the customer is), the change since the approved version question by
 * question, switch on/off, and the responses.
 */
export const intakePages = new Hono<DashboardEnv>()
  .get("/intakes", async (c) => {
    const session = c.var.session;
    const intakes = await listBusinessIntakes(c.var.deps, session.business.id);
    return renderPage(
      c,
      200,
      <Layout title="Intakes" session={session}>
        {c.req.query("removed") === "1" && (
          <section class="notice" aria-live="polite" data-testid="notice">
            <p>The intake was removed, with its stored responses.</p>
          </section>
        )}
        {intakes.length === 0 && <p>No app has registered an intake.</p>}
        <table>
          {intakes.map((intake) => (
            <tr>
              <td>
                <a href={`/dashboard/intakes/${intake.id}`}>{intake.title}</a> <code>{intake.name}</code>
              </td>
              <td>
                <OnOff enabled={intake.enabled} />
              </td>
            </tr>
          ))}
        </table>
      </Layout>,
    );
  })
  .get("/intakes/:id", async (c) => {
    const { business } = c.var.session;
    const summary = await approvalSummary(c.var.deps, business.id, intakeId(c));
    const responses = await latestResponses(c.var.deps, business.id, summary.intake.id);
    return renderPage(c, 200, <IntakePage session={c.var.session} summary={summary} responses={responses} />);
  })
  .post("/intakes/:id/on", async (c) => {
    const body = await c.req.parseBody();
    const id = intakeId(c);
    // The version the owner reviewed: a PATCH that landed meanwhile is refused, not approved unseen.
    await switchIntakeOn(c.var.deps, c.var.session.business.id, id, {
      version: Number(body.version),
    });
    return c.redirect(`/dashboard/intakes/${id}`, 303);
  })
  .post("/intakes/:id/off", async (c) => {
    const id = intakeId(c);
    await switchIntakeOff(c.var.deps, c.var.session.business.id, id);
    return c.redirect(`/dashboard/intakes/${id}`, 303);
  })
  .route("/", intakeRemovalPages);

type Responses = Awaited<ReturnType<typeof latestResponses>>;

function IntakePage(props: {
  session: DashboardEnv["Variables"]["session"];
  summary: ApprovalSummary;
  responses: Responses;
}) {
  const { summary, session } = props;
  const { intake } = summary;
  return (
    <Layout title={intake.title} session={session}>
      <section>
        <p>
          <OnOff enabled={intake.enabled} /> <code>{intake.name}</code> · version {summary.version}
        </p>
        <p>{intake.description}</p>
      </section>
      <section data-testid="approval">
        <h2>What the Secretary will ask</h2>
        <p class="muted" data-testid="question-order">
          In this order, skipping what the customer has already said. The answers are sent as soon as every required
          question is answered: an optional question after the last required one is asked only if the customer answers
          it in the same message.
        </p>
        <ol>
          {summary.questions.map((question) => (
            <li>
              {question.label}{" "}
              <span class="muted">
                ({question.type}
                {question.required ? ", required" : ", optional"}
                {question.options ? `: ${question.options.join(", ")}` : ""})
              </span>
            </li>
          ))}
        </ol>
        <h2>Contact details the app will receive</h2>
        {summary.contactDetails.length === 0 ? (
          <p>None.</p>
        ) : (
          <ul>
            {summary.contactDetails.map((detail) => (
              <li>
                {detail.kind === "email" ? "Email address" : "Phone number"}: “{detail.label}”
              </li>
            ))}
          </ul>
        )}
        <h2>Questions that ask who the customer is</h2>
        {summary.identityQuestions.length === 0 ? (
          <p>None.</p>
        ) : (
          <ul>
            {summary.identityQuestions.map((question) => (
              <li>
                “{question.label}” asks for the customer's{" "}
                {question.asks.map((kind) => IDENTITY_NAMES[kind]).join(" and ")}
              </li>
            ))}
          </ul>
        )}
        {/* Drawn only when something differs: right after an approval the list is empty (docs/intakes.md). */}
        {summary.changes && anyChange(summary.changes) && <Changes changes={summary.changes} />}
        {intake.enabled ? (
          <ButtonForm session={session} action={`/dashboard/intakes/${intake.id}/off`} label="Switch off" />
        ) : summary.registeredBy.revoked ? (
          <p class="error">The key or app that registered this intake was revoked: it cannot be switched on.</p>
        ) : (
          <ButtonForm
            session={session}
            action={`/dashboard/intakes/${intake.id}/on`}
            label="Approve and switch on"
            kind="primary"
            fields={{ version: String(summary.version) }}
          />
        )}
        <p>
          <a href={`/dashboard/intakes/${intake.id}/remove`}>Remove this intake</a>
        </p>
      </section>
      <section>
        <h2>Responses</h2>
        {props.responses.length === 0 && <p>No responses yet.</p>}
        {props.responses.map((response) => (
          <div class="card">
            <p class="muted">
              <When at={response.completed_at} /> · {response.conversation.channel}
            </p>
            <ul>
              {response.answers.map((answer) => (
                <li>
                  {answer.label}: <strong>{answer.value}</strong>{" "}
                  {answer.proof && <span class="tag">{answer.proof}</span>}
                </li>
              ))}
            </ul>
          </div>
        ))}
      </section>
    </Layout>
  );
}

type ChangeList = NonNullable<ApprovalSummary["changes"]>;

const anyChange = (changes: ChangeList) =>
  changes.title !== null || changes.description !== null || changes.questions.length > 0;

function Changes(props: { changes: ChangeList }) {
  const { changes } = props;
  return (
    <div class="card warning" data-testid="changes">
      <h2>Changed since the version you approved ({changes.sinceVersion})</h2>
      <ul>
        {changes.title && (
          <li>
            Title: “{changes.title.before}” → “{changes.title.after}”
          </li>
        )}
        {changes.description && <li>Description changed: “{changes.description.after}”</li>}
        {changes.questions.map((change) => (
          <li>
            {change.change === "added" && `Added question ${change.index + 1}: “${change.question.label}”`}
            {change.change === "removed" && `Removed question “${change.question.label}”`}
            {change.change === "moved" && `Moved “${change.id}” from place ${change.from + 1} to ${change.to + 1}`}
            {change.change === "changed" &&
              `Changed “${change.id}”: ${change.properties.map((p) => `${p.property} ${JSON.stringify(p.before)} → ${JSON.stringify(p.after)}`).join("; ")}`}
          </li>
        ))}
      </ul>
    </div>
  );
}
