import { Hono } from "hono";
import { type AddedBy, listKnowledgeSources, removeKnowledgeSource } from "../../domain/knowledge/owner-decisions";
import { numericId } from "../../lib/validation";
import { renderPage } from "../../pages/page-shell";
import { DisconnectedApp } from "./created-by";
import type { DashboardEnv } from "./dashboard-env";
import { ButtonForm, Layout } from "./layout";

/**
 * A disconnected app's pushed texts remain until the owner removes them, marked as coming from a disconnected app
 * (docs/architecture.md, What happens when access ends).
 */
const fromDisconnectedApp = (addedBy: AddedBy) => addedBy.kind === "oauth_app" && addedBy.disconnected;

/** Knowledge sources: the owner's own, and pushed texts marked as added by a connected app; remove any. */
export const knowledgePages = new Hono<DashboardEnv>()
  .get("/knowledge", async (c) => {
    const session = c.var.session;
    const sources = await listKnowledgeSources(c.var.deps, session.business);
    return renderPage(
      c,
      200,
      <Layout title="Knowledge sources" session={session}>
        <p class="muted">
          {sources.used} of {sources.limit} sources used. Your own settings always take precedence over pushed texts.
        </p>
        <section>
          <h2>Your sources</h2>
          {sources.own.length === 0 && <p>None.</p>}
          <table>
            {sources.own.map((source) => (
              <tr>
                <td>
                  {source.title} <span class="muted">({source.kind})</span>
                </td>
                <td>
                  <ButtonForm
                    session={session}
                    action={`/dashboard/knowledge/own/${source.id}/remove`}
                    label="Remove"
                    kind="danger"
                  />
                </td>
              </tr>
            ))}
          </table>
        </section>
        <section>
          <h2>Added by connected apps</h2>
          {sources.pushed.length === 0 && <p>None.</p>}
          <table>
            {sources.pushed.map((item) => (
              <tr>
                <td>
                  <strong>{item.title}</strong> <code>{item.key}</code>
                  <br />
                  <span class="muted">
                    {item.addedByText} · {item.chars} characters
                  </span>
                  {fromDisconnectedApp(item.addedBy) && (
                    <>
                      {" "}
                      <DisconnectedApp />
                    </>
                  )}
                </td>
                <td>
                  <ButtonForm
                    session={session}
                    action="/dashboard/knowledge/pushed/remove"
                    label={`Remove ${item.key}`}
                    kind="danger"
                    fields={{ key: item.key }}
                  />
                </td>
              </tr>
            ))}
          </table>
        </section>
      </Layout>,
    );
  })
  .post("/knowledge/own/:id/remove", async (c) => {
    await removeKnowledgeSource(c.var.deps, c.var.session.business.id, {
      ownSourceId: numericId(c.req.param("id")) ?? 0,
    });
    return c.redirect("/dashboard/knowledge", 303);
  })
  .post("/knowledge/pushed/remove", async (c) => {
    const body = await c.req.parseBody();
    await removeKnowledgeSource(c.var.deps, c.var.session.business.id, { pushedKey: String(body.key ?? "") });
    return c.redirect("/dashboard/knowledge", 303);
  });
