import { Hono } from "hono";
import { planRefusal } from "../../domain/access/businesses";
import { ownerOverview } from "../../domain/owner/overview";
import { renderPage } from "../../pages/page-shell";
import { CreatedBy } from "./created-by";
import type { DashboardEnv } from "./dashboard-env";
import { Layout, Tag } from "./layout";
import { When, WithTimes } from "./time-text";

const PLAN_NAMES = { free: "Free", pro: "Pro", business: "Business" } as const;

type Overview = Awaited<ReturnType<typeof ownerOverview>>;

/**
 * The overview, the dashboard's home: the plan, then what needs the owner: actions and intakes waiting for approval
 * (and those a partner's change switched off), endpoints switched off by their health or whose recent deliveries
 * fail, knowledge sources used against the plan's limit, and connected apps and keys with when each was last used
 * (docs/decisions.md, Partners of one business stay apart).
 */
export const overviewPage = new Hono<DashboardEnv>().get("/", async (c) => {
  const session = c.var.session;
  const overview = await ownerOverview(c.var.deps, session.business);
  return renderPage(
    c,
    200,
    <Layout title="Overview" session={session}>
      <Plan business={session.business} />
      <Waiting overview={overview} />
      <DisabledEndpoints endpoints={overview.disabledEndpoints} />
      <FailingEndpoints endpoints={overview.failingEndpoints} />
      <section data-testid="knowledge-use">
        <h2>Knowledge sources</h2>
        <p>
          <a href="/dashboard/knowledge">
            {overview.knowledge.used} of {overview.knowledge.limit} sources used
          </a>{" "}
          {overview.knowledge.used >= overview.knowledge.limit && <Tag good={false}>at the limit</Tag>}
        </p>
      </section>
      <Credentials overview={overview} />
    </Layout>,
  );
});

function Plan(props: { business: DashboardEnv["Variables"]["session"]["business"] }) {
  const { plan, planActive } = props.business;
  const included = planRefusal(props.business) === undefined;
  return (
    <section>
      <h2>Plan</h2>
      <p>
        <strong>{PLAN_NAMES[plan]}</strong> <Tag good={included}>{planActive ? "active" : "lapsed"}</Tag>
      </p>
      <p class="muted">
        {included
          ? "Your plan includes the partner API: connected apps and API keys work."
          : plan === "free"
            ? "The Free plan does not include the partner API: apps and keys are refused until you move to Pro or Business."
            : "Your plan has lapsed: apps and keys are refused until it is active again."}
      </p>
    </section>
  );
}

/**
 * Intakes and actions never approved or switched off by a partner's change, and actions on whose change waits for
 * the owner: each links to its review.
 */
function Waiting(props: { overview: Overview }) {
  const { intakes, actions } = props.overview;
  return (
    <section data-testid="waiting">
      <h2>Waiting for your approval</h2>
      {intakes.length === 0 && actions.length === 0 && <p>Nothing is waiting for you.</p>}
      <ul>
        {intakes.map((intake) => (
          <li>
            Intake <a href={`/dashboard/intakes/${intake.id}`}>{intake.title}</a>:{" "}
            {intake.waiting === "new"
              ? "new, never approved"
              : "changed by the partner since you approved it, so it was switched off"}
          </li>
        ))}
        {actions.map((action) => (
          <li>
            Action <a href={`/dashboard/actions/${action.id}`}>{action.title}</a>:{" "}
            {action.waiting === "change_pending"
              ? "the partner changed what it does; the Secretary keeps using the version you approved until you accept the change"
              : action.waiting === "changed_off"
                ? "its address was changed by the partner since you switched it on, so it was switched off"
                : "new, never switched on"}{" "}
            <CreatedBy creator={action.creator} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/**
 * Endpoints disabled by their health (docs/webhooks.md, Endpoint health): why, and who can bring each back: the partner
 * (`POST /webhooks/{id}/enable`), once its receiver works, or the owner on the endpoint's page; the owner can also
 * remove it.
 */
function DisabledEndpoints(props: { endpoints: Overview["disabledEndpoints"] }) {
  if (props.endpoints.length === 0) return null;
  return (
    <section data-testid="disabled-endpoints">
      <h2>Webhook endpoints switched off</h2>
      <p class="muted">
        These get no new events until they are switched back on, by the app or integration that added them or by you on
        the endpoint's page; the app or integration can then recover the events it missed.
      </p>
      <ul>
        {props.endpoints.map((endpoint) => (
          <li>
            <a href={`/dashboard/webhooks/${endpoint.id}`}>{endpoint.url}</a>:{" "}
            <WithTimes text={endpoint.disabledReason ?? ""} /> <CreatedBy creator={endpoint.creator} />
          </li>
        ))}
      </ul>
    </section>
  );
}

function FailingEndpoints(props: { endpoints: Overview["failingEndpoints"] }) {
  return (
    <section data-testid="failing">
      <h2>Webhook endpoints with failing deliveries</h2>
      {props.endpoints.length === 0 && <p>No delivery has failed in the last 24 hours.</p>}
      <ul>
        {props.endpoints.map((endpoint) => (
          <li>
            <a href={`/dashboard/webhooks/${endpoint.id}`}>{endpoint.url}</a>:{" "}
            {endpoint.deliveries === 1 ? "1 delivery" : `${endpoint.deliveries} deliveries`} failed or retrying in the
            last 24 hours.
            {endpoint.lastAttemptAt && (
              <>
                {" "}
                Last attempt <When at={endpoint.lastAttemptAt} />:{" "}
                {endpoint.lastStatusCode !== null ? `HTTP ${endpoint.lastStatusCode}` : "no answer"}
                {endpoint.lastError && ` — ${endpoint.lastError}`}
              </>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}

/** Connected apps and active API keys, with when each was last used (recorded at most once an hour). */
function Credentials(props: { overview: Overview }) {
  const { apps, keys } = props.overview;
  return (
    <section data-testid="credentials">
      <h2>Connected apps and API keys</h2>
      {apps.length === 0 && keys.length === 0 && <p>No app is connected and no API key is active.</p>}
      <table>
        {apps.map((app) => (
          <tr>
            <td>
              {app.appName} <span class="muted">(app)</span>
            </td>
            <td>
              Last used: <When at={app.lastUsedAt} />
            </td>
          </tr>
        ))}
        {keys.map((key) => (
          <tr>
            <td>
              {key.label} <code>{key.displayPrefix}…</code> <span class="muted">(API key)</span>
            </td>
            <td>
              Last used: <When at={key.lastUsedAt} />
            </td>
          </tr>
        ))}
      </table>
      <p class="muted">Last use is recorded at most once an hour.</p>
    </section>
  );
}
