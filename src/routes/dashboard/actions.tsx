import type { Context } from "hono";
import { Hono } from "hono";
import { runRead } from "../../db/reads";
import type { Dependencies } from "../../dependencies";
import { pendingChange } from "../../domain/actions/action-object";
import { testAction } from "../../domain/actions/calls";
import {
  acceptActionChange,
  actionCreator,
  listActionsForOwner,
  switchAction,
} from "../../domain/actions/owner-decisions";
import { actionNotFound, findAction, getAction } from "../../domain/actions/reads";
import { deleteAction } from "../../domain/actions/registration";
import { mcpServersForOwner } from "../../domain/owner/mcp-servers";
import { ApiError } from "../../lib/api-error";
import { idOrNotFound } from "../../lib/validation";
import { renderPage } from "../../pages/page-shell";
import { ActionPage } from "./action-page";
import { formArguments, type Tested } from "./action-test-form";
import { CreatedBy } from "./created-by";
import type { DashboardEnv } from "./dashboard-env";
import { Layout, OnOff } from "./layout";
import { McpServers } from "./mcp-servers";
import { removalPage } from "./removal-page";

/** The page's id as the domain takes it, or the 404 page. */
const actionId = (c: Context<DashboardEnv>) => idOrNotFound(c.req.param("id") ?? "", actionNotFound);

/** A refusal the action's page shows in place, above the action as it now is (any other error goes on). */
function refusalShownInPlace(error: unknown, status: 409 | 422): string {
  if (error instanceof ApiError && error.status === status) return error.message;
  throw error;
}

/**
 * The action, the change of it waiting for the owner, who registered it, and whether it is off for its MCP server's
 * sake, read together (the action's page).
 */
async function actionWithCreator(deps: Dependencies, businessId: string, id: number) {
  const [action, row, creator] = await Promise.all([
    runRead(deps.db, getAction(businessId, id, deps.clock())),
    findAction(deps, businessId, id),
    actionCreator(deps, businessId, id),
  ]);
  const unavailable = row.offReason === "removed" || row.offReason === "unusable" ? row.offReason : null;
  return { action, change: pendingChange(row), creator, unavailable };
}

type ReviewedWrite = (
  deps: Dependencies,
  businessId: string,
  id: number,
  options: { reviewed: string },
) => Promise<unknown>;

/**
 * The owner's approval of the version they reviewed (switching on, accepting a change): the form carries its digest,
 * and a 409 (the action changed since) shows the action again as it now is, saying so.
 */
async function reviewedWrite(c: Context<DashboardEnv>, write: ReviewedWrite) {
  const { business } = c.var.session;
  const id = actionId(c);
  const { reviewed } = await c.req.parseBody();
  try {
    await write(c.var.deps, business.id, id, { reviewed: typeof reviewed === "string" ? reviewed : "" });
  } catch (error) {
    const changed = refusalShownInPlace(error, 409);
    const shown = await actionWithCreator(c.var.deps, business.id, id);
    return renderPage(c, 409, <ActionPage session={c.var.session} {...shown} changed={changed} />);
  }
  return c.redirect(`/dashboard/actions/${id}`, 303);
}

/**
 * Connected actions: review (description, url, parameters), Test, switch on/off, the 10 recent calls, and the
 * owner's removal of any action, whoever registered it (docs/architecture.md, Principals and owner sides).
 */
export const actionPages = new Hono<DashboardEnv>()
  // A table apart from the endpoints' and intakes': each row says what its own kind of record needs to be judged.
  .get("/actions", async (c) => {
    const session = c.var.session;
    const [actions, servers] = await Promise.all([
      listActionsForOwner(c.var.deps, session.business.id),
      mcpServersForOwner(c.var.deps, session.business.id),
    ]);
    // A server's tool is shown under its server, not twice.
    const tools = new Set(servers.flatMap((server) => server.tools.map((tool) => tool.actionId)));
    const own = actions.filter((action) => !tools.has(action.id));
    return renderPage(
      c,
      200,
      <Layout title="Connected actions" session={session}>
        {actions.length === 0 && servers.length === 0 && <p>No app has registered an action.</p>}
        <table>
          {own.map((action) => (
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
        <McpServers servers={servers} />
      </Layout>,
    );
  })
  .get("/actions/:id", async (c) => {
    const shown = await actionWithCreator(c.var.deps, c.var.session.business.id, actionId(c));
    return renderPage(c, 200, <ActionPage session={c.var.session} {...shown} />);
  })
  .post("/actions/:id/test", async (c) => {
    const { business } = c.var.session;
    const id = actionId(c);
    // The form has one field per parameter (action-test-form.tsx), read back by the parameters shown to the owner;
    // the row read here is the one the test calls, and the page is read once, after the test, as it then is.
    const [body, row] = await Promise.all([c.req.parseBody(), findAction(c.var.deps, business.id, id)]);
    const { values, arguments: sample, problem: unreadable } = formArguments(row.parameters, body);
    let tested: Tested | undefined;
    let problem: string | undefined;
    if (!unreadable) {
      try {
        tested = await testAction(c.var.deps, business, row, sample);
      } catch (error) {
        // Sample arguments without a required parameter make no call, as for the Secretary.
        problem = refusalShownInPlace(error, 422);
      }
    }
    const shown = await actionWithCreator(c.var.deps, business.id, id);
    return renderPage(
      c,
      unreadable ? 400 : problem ? 422 : 200,
      <ActionPage session={c.var.session} {...shown} values={values} tested={tested} problem={unreadable ?? problem} />,
    );
  })
  // Both guarded by the version the owner reviewed: a PATCH that landed meanwhile is shown, not approved unseen.
  .post("/actions/:id/on", (c) =>
    reviewedWrite(c, (deps, businessId, id, options) => switchAction(deps, businessId, id, true, options)),
  )
  .post("/actions/:id/accept", (c) => reviewedWrite(c, acceptActionChange))
  .post("/actions/:id/off", async (c) => {
    const id = actionId(c);
    await switchAction(c.var.deps, c.var.session.business.id, id, false);
    return c.redirect(`/dashboard/actions/${id}`, 303);
  })
  .get("/actions/:id/remove", async (c) => {
    const { action, creator } = await actionWithCreator(c.var.deps, c.var.session.business.id, actionId(c));
    return removalPage(c, {
      title: `Remove the action “${action.title}”?`,
      named: (
        <>
          <code>{action.name}</code> <CreatedBy creator={creator} />
        </>
      ),
      at: `/dashboard/actions/${action.id}`,
      confirm: "Remove the action",
      stops: (
        <ul>
          <li>The Secretary no longer calls it, from now on.</li>
          <li>Its secret stops signing, and its call history is deleted with it.</li>
        </ul>
      ),
      remains: (
        <p>
          Every other action. The partner can register it again with its key or app, if it still has access; it is then
          off until you switch it on.
        </p>
      ),
    });
  })
  .post("/actions/:id/remove", async (c) => {
    await deleteAction(c.var.deps, c.var.session.business.id, actionId(c));
    return c.redirect("/dashboard/actions", 303);
  });
