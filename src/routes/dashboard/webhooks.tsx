import { Hono } from "hono";
import { database } from "../../db/client";
import { runRead } from "../../db/reads";
import { endpointHistory } from "../../domain/webhooks/deliveries";
import { endpointNotFound, findEndpoint, listEndpoints } from "../../domain/webhooks/endpoints";
import { sendPing } from "../../domain/webhooks/events";
import { idOrNotFound } from "../../lib/validation";
import { renderPage } from "../page-shell";
import type { DashboardEnv } from "./dashboard-env";
import { ButtonForm, Layout, Tag } from "./layout";

/** Webhook endpoints: their events, the Test button (`ping`), and each delivery with every attempt. */
export const webhookPages = new Hono<DashboardEnv>()
  .get("/webhooks", async (c) => {
    const session = c.var.session;
    const endpoints = await runRead(database(c.env.DB), listEndpoints(database(c.env.DB), session.business.id));
    return renderPage(
      c,
      200,
      <Layout title="Webhook endpoints" session={session}>
        {endpoints.length === 0 && <p>No app has subscribed an endpoint.</p>}
        <table>
          {endpoints.map((endpoint) => (
            <tr>
              <td>
                <a href={`/dashboard/webhooks/${endpoint.id}`}>{endpoint.url}</a>
                <br />
                <span class="muted">{endpoint.events.join(", ")}</span>
              </td>
            </tr>
          ))}
        </table>
      </Layout>,
    );
  })
  .get("/webhooks/:id", async (c) => {
    const db = database(c.env.DB);
    const session = c.var.session;
    const endpoint = await findEndpoint(db, session.business.id, idOrNotFound(c.req.param("id"), endpointNotFound));
    const history = await endpointHistory(db, session.business.id, endpoint.id);
    return renderPage(
      c,
      200,
      <Layout title="Webhook endpoint" session={session}>
        <section>
          <p>
            <code>{endpoint.url}</code>
          </p>
          <p>Events: {endpoint.events.join(", ")}</p>
          {endpoint.description && <p>{endpoint.description}</p>}
          <ButtonForm
            session={session}
            action={`/dashboard/webhooks/${endpoint.id}/ping`}
            label="Send a test event"
            kind="primary"
          />
        </section>
        <section data-testid="deliveries">
          <h2>Deliveries</h2>
          {history.length === 0 && <p>None yet.</p>}
          {history.map((delivery) => (
            <div class="card">
              <p>
                <strong>{delivery.event}</strong> <Tag good={delivery.status !== "failed"}>{delivery.status}</Tag>{" "}
                <span class="muted">{delivery.createdAt.replace("T", " ").slice(0, 19)}</span>
              </p>
              <ul>
                {delivery.attempts.map((attempt) => (
                  <li>
                    {attempt.attemptedAt.replace("T", " ").slice(0, 19)}: {attempt.statusCode ?? "no answer"}
                    {attempt.error && ` — ${attempt.error}`} ({attempt.durationMs} ms)
                  </li>
                ))}
              </ul>
            </div>
          ))}
        </section>
      </Layout>,
    );
  })
  .post("/webhooks/:id/ping", async (c) => {
    const endpoint = await findEndpoint(
      database(c.env.DB),
      c.var.session.business.id,
      idOrNotFound(c.req.param("id"), endpointNotFound),
    );
    await sendPing(c.env.WEBHOOK_DELIVERIES, database(c.env.DB), c.var.session.business, endpoint.id);
    return c.redirect(`/dashboard/webhooks/${endpoint.id}`, 303);
  });
