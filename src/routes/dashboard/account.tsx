import { type Context, Hono } from "hono";
import { appDisconnectionPreview, keyRevocationPreview } from "../../domain/access/access-ending";
import { apiKeyNotFound, createApiKey, listApiKeys, MAX_ACTIVE_KEYS, revokeApiKey } from "../../domain/access/api-keys";
import { connectionNotFound, disconnectApp, listConnections } from "../../domain/access/app-connections";
import { clientIdHost, isClientIdUrl } from "../../lib/client-id-urls";
import { idOrNotFound } from "../../lib/validation";
import { renderPage } from "../../pages/page-shell";
import { AppDisconnectionPage, KeyRevocationPage } from "./access-ending";
import type { DashboardEnv } from "./dashboard-env";
import { asksPassword, freshSignInRefusal, PasswordField, type Refusal } from "./fresh-sign-in";
import { Csrf, Layout, Tag } from "./layout";
import { When } from "./time-text";

/** The page of an app's disconnection, drawn again with the refusal when the password it asked for was not right. */
async function disconnectionPage(c: Context<DashboardEnv>, id: number, refusal?: Refusal) {
  const { session, deps } = c.var;
  const preview = await appDisconnectionPreview(deps, session.business.id, id);
  const page = (
    <AppDisconnectionPage session={session} preview={preview} askPassword={asksPassword(c)} error={refusal?.error} />
  );
  return renderPage(c, refusal?.status ?? 200, page);
}

/**
 * API keys and connected apps, which the navigation groups with Webhooks under Integration (docs/decisions.md, Exactly
 * as the contract says): create a key (shown once); revoke a key or disconnect an app after a page that says what will
 * stop and what remains (docs/architecture.md, What happens when access ends). Creating a key and disconnecting an app
 * ask for the password once the sign-in is 10 minutes old (fresh-sign-in.tsx).
 */
export const account = new Hono<DashboardEnv>()
  .get("/keys", async (c) =>
    renderPage(
      c,
      200,
      <KeysPage
        session={c.var.session}
        keys={await listApiKeys(c.var.deps, c.var.session.business.id)}
        askPassword={asksPassword(c)}
      />,
    ),
  )
  .post("/keys", async (c) => {
    const { session, deps } = c.var;
    const body = await c.req.parseBody();
    const label = typeof body.label === "string" ? body.label : "";
    const refusal = await freshSignInRefusal(c, body.password);
    const created = refusal ? undefined : await createApiKey(deps, session.business, label);
    const keys = await listApiKeys(deps, session.business.id);
    return renderPage(
      c,
      refusal?.status ?? 201,
      <KeysPage
        session={session}
        keys={keys}
        askPassword={asksPassword(c)}
        created={created}
        refused={refusal && { error: refusal.error, label }}
      />,
    );
  })
  .get("/keys/:id/revoke", async (c) => {
    const session = c.var.session;
    const preview = await keyRevocationPreview(
      c.var.deps,
      session.business.id,
      idOrNotFound(c.req.param("id"), apiKeyNotFound),
    );
    return renderPage(c, 200, <KeyRevocationPage session={session} preview={preview} />);
  })
  .post("/keys/:id/revoke", async (c) => {
    const id = idOrNotFound(c.req.param("id"), apiKeyNotFound);
    const { switch_actions_off } = await c.req.parseBody();
    await revokeApiKey(c.var.deps, c.var.session.business.id, id, {
      switchActionsOff: switch_actions_off === "on",
    });
    return c.redirect("/dashboard/keys", 303);
  })
  .get("/apps", async (c) => {
    const connections = await listConnections(c.var.deps, c.var.session.business.id);
    const session = c.var.session;
    return renderPage(
      c,
      200,
      <Layout title="Connected apps" session={session}>
        {connections.length === 0 && <p>No app is connected.</p>}
        <table>
          {connections.map((connection) => (
            <tr>
              <td>
                <strong>{connection.appName}</strong>
                {/* An app known by its metadata document: its own name, and the host its client_id names. */}
                {isClientIdUrl(connection.clientId) && (
                  <span class="muted"> (as it names itself) from {clientIdHost(connection.clientId)}</span>
                )}
              </td>
              <td>
                Connected <When at={connection.connectedAt} precision="day" />
              </td>
              <td>
                {connection.disconnectedAt ? (
                  <span class="tag off">
                    disconnected <When at={connection.disconnectedAt} precision="day" />
                  </span>
                ) : (
                  <a href={`/dashboard/apps/${connection.id}/disconnect`}>Disconnect {connection.appName}</a>
                )}
              </td>
            </tr>
          ))}
        </table>
        <p class="muted">
          Disconnecting stops the app's access at once, switches its intakes off and removes its webhook endpoints; you
          choose whether its actions are switched off too, and its actions and knowledge stay registered until you
          remove them. You see each of them before you confirm.
        </p>
      </Layout>,
    );
  })
  .get("/apps/:id/disconnect", (c) => disconnectionPage(c, idOrNotFound(c.req.param("id"), connectionNotFound)))
  .post("/apps/:id/disconnect", async (c) => {
    const id = idOrNotFound(c.req.param("id"), connectionNotFound);
    const { switch_actions_off, password } = await c.req.parseBody();
    const refusal = await freshSignInRefusal(c, password);
    if (refusal) return disconnectionPage(c, id, refusal);
    await disconnectApp(c.var.deps, c.var.session.business.id, id, { switchActionsOff: switch_actions_off === "on" });
    return c.redirect("/dashboard/apps", 303);
  });

type Key = Awaited<ReturnType<typeof listApiKeys>>[number];

function KeysPage(props: {
  session: DashboardEnv["Variables"]["session"];
  keys: Key[];
  askPassword: boolean;
  created?: { key: string; label: string };
  /** The password asked for was not right: the message, and the name the owner typed, to draw the form again. */
  refused?: { error: string; label: string };
}) {
  const active = props.keys.filter((key) => !key.revokedAt);
  return (
    <Layout title="API keys" session={props.session}>
      {props.created && (
        <section class="notice" aria-live="polite">
          <p>
            The key <strong>{props.created.label}</strong> was created. Copy it now: it is shown only once.
          </p>
          <p class="secret" data-testid="new-key">
            {props.created.key}
          </p>
        </section>
      )}
      <section>
        <h2>Create a key</h2>
        <form method="post" action="/dashboard/keys">
          <Csrf session={props.session} />
          <label for="label">Name (who will use it)</label>
          <input id="label" name="label" maxlength={80} value={props.refused?.label} required />
          {props.askPassword && <PasswordField error={props.refused?.error} />}
          <p>
            <button type="submit" class="primary" disabled={active.length >= MAX_ACTIVE_KEYS}>
              Create key
            </button>
          </p>
          <p class="muted">
            {active.length} of {MAX_ACTIVE_KEYS} active keys. Revoking a key switches its intakes off; you see what else
            stops before you confirm.
          </p>
        </form>
      </section>
      <table>
        {props.keys.map((key) => (
          <tr>
            <td>
              <strong>{key.label}</strong> <code>{key.displayPrefix}…</code>
            </td>
            <td>
              Created <When at={key.createdAt} precision="day" />
            </td>
            <td>
              {key.revokedAt ? (
                <Tag good={false}>revoked</Tag>
              ) : (
                <a href={`/dashboard/keys/${key.id}/revoke`}>Revoke {key.label}</a>
              )}
            </td>
          </tr>
        ))}
      </table>
    </Layout>
  );
}
