import type { Context } from "hono";
import { Hono } from "hono";
import { runRead } from "../../db/reads";
import { endpointDeliveries } from "../../domain/webhooks/delivery-log";
import { deleteEndpoint, endpointNotFound } from "../../domain/webhooks/endpoints";
import { enableEndpoint } from "../../domain/webhooks/health";
import { endpointForOwner, listEndpointsForOwner } from "../../domain/webhooks/owner-endpoints";
import { deliveryNotFound, sendDeliveryAgain } from "../../domain/webhooks/redelivery";
import { sendPing } from "../../domain/webhooks/test-events";
import { idOrNotFound, numericId } from "../../lib/validation";
import { renderPage } from "../../pages/page-shell";
import { Confirmation } from "./confirmation";
import { CreatedBy } from "./created-by";
import type { DashboardEnv } from "./dashboard-env";
import { ButtonForm, Layout, Tag } from "./layout";

/** The page's endpoint id as the domain takes it, or the 404 page. */
const endpointId = (c: Context<DashboardEnv>) => idOrNotFound(c.req.param("id") ?? "", endpointNotFound);

const secondText = (at: string) => at.replace("T", " ").slice(0, 19);

/** On, or switched off by its health (docs/webhooks.md, Endpoint health): in the list and on the endpoint's page. */
const EndpointStatus = (props: { status: "enabled" | "disabled" }) => (
  <Tag good={props.status === "enabled"}>{props.status === "enabled" ? "On" : "Switched off"}</Tag>
);

/** Deliveries per page of an endpoint's history; older ones follow by the API's cursor, `starting_after`. */
const HISTORY_PAGE = 50;

/**
 * Webhook endpoints: their events, who added them and their health, the Test button (`ping`), each delivery with
 * every attempt and a Send again, switching a disabled endpoint back on, and the owner's removal of any endpoint,
 * whoever added it (docs/architecture.md, Principals and owner sides; docs/webhooks.md, Endpoint health).
 */
export const webhookPages = new Hono<DashboardEnv>()
  .get("/webhooks", async (c) => {
    const session = c.var.session;
    const endpoints = await listEndpointsForOwner(c.var.deps, session.business.id);
    return renderPage(
      c,
      200,
      <Layout title="Webhook endpoints" session={session}>
        {endpoints.length === 0 && <p>No app has subscribed an endpoint.</p>}
        <table>
          {endpoints.map((endpoint) => (
            <tr data-testid={`endpoint-${endpoint.id}`}>
              <td>
                <a href={`/dashboard/webhooks/${endpoint.id}`}>{endpoint.url}</a>
                <br />
                <span class="muted">{endpoint.events.join(", ")}</span>
                <br />
                <CreatedBy creator={endpoint.creator} />
              </td>
              <td>
                <EndpointStatus status={endpoint.status} />
              </td>
            </tr>
          ))}
        </table>
      </Layout>,
    );
  })
  .get("/webhooks/:id", async (c) => {
    const session = c.var.session;
    const id = endpointId(c);
    // The partner's `GET /webhooks/{id}/deliveries`, read for the whole business (the owner sees every side).
    const startingAfter = numericId(c.req.query("starting_after") ?? "");
    const [endpoint, history] = await Promise.all([
      endpointForOwner(c.var.deps, session.business.id, id),
      runRead(c.var.deps.db, endpointDeliveries(session.business.id, id, { limit: HISTORY_PAGE, startingAfter })),
    ]);
    const lastShown = history.deliveries.at(-1);
    // Nothing is sent to a disabled endpoint, a test or a Send again included (a ping would write no delivery, a Send
    // again is refused with a 409), so its page offers to switch it back on instead.
    const enabled = endpoint.status === "enabled";
    return renderPage(
      c,
      200,
      <Layout title="Webhook endpoint" session={session}>
        {/* Switched back on (the redirect's `switched=on`), and not switched off again since. */}
        {enabled && c.req.query("switched") === "on" && (
          <section class="notice" aria-live="polite" data-testid="notice">
            <p>
              The endpoint is switched back on: it receives new events from now on. The app or integration that added it
              can recover the events it missed.
            </p>
          </section>
        )}
        <section>
          <p>
            <code>{endpoint.url}</code>
          </p>
          <p>Events: {endpoint.events.join(", ")}</p>
          {endpoint.description && <p>{endpoint.description}</p>}
          <p>
            <CreatedBy creator={endpoint.creator} />
          </p>
          {enabled && (
            <ButtonForm
              session={session}
              action={`/dashboard/webhooks/${endpoint.id}/ping`}
              label="Send a test event"
              kind="primary"
            />
          )}
          <p>
            <a href={`/dashboard/webhooks/${endpoint.id}/remove`}>Remove this endpoint</a>
          </p>
        </section>
        <section data-testid="health">
          <h2>Health</h2>
          <p>
            <EndpointStatus status={endpoint.status} />
          </p>
          {endpoint.disabledReason && <p>Why it was switched off: {endpoint.disabledReason}</p>}
          <p>
            Last successful delivery: {endpoint.lastSuccessAt === null ? "never" : secondText(endpoint.lastSuccessAt)}
          </p>
          {!enabled && (
            <>
              <p class="muted">
                Nothing is sent to it while it is switched off. Switch it back on once its receiver works again: one
                that still fails is switched off again.
              </p>
              <ButtonForm
                session={session}
                action={`/dashboard/webhooks/${endpoint.id}/on`}
                label="Switch back on"
                kind="primary"
              />
            </>
          )}
        </section>
        <section data-testid="deliveries">
          <h2>Deliveries</h2>
          {history.deliveries.length === 0 && <p>{startingAfter === undefined ? "None yet." : "No older ones."}</p>}
          {history.deliveries.map((delivery) => (
            <div class="card" data-testid={`delivery-${delivery.id}`}>
              <p>
                <strong>{delivery.event}</strong> <Tag good={delivery.status !== "failed"}>{delivery.status}</Tag>{" "}
                <span class="muted">{secondText(delivery.created_at)}</span>
              </p>
              <ul>
                {delivery.attempts.map((attempt) => (
                  <li>
                    {secondText(attempt.attempted_at)}: {attempt.status_code ?? "no answer"}
                    {attempt.error && ` — ${attempt.error}`} ({attempt.duration_ms} ms)
                  </li>
                ))}
              </ul>
              {enabled && (
                <ButtonForm
                  session={session}
                  action={`/dashboard/webhooks/${endpoint.id}/deliveries/${delivery.id}/send-again`}
                  label="Send again"
                />
              )}
            </div>
          ))}
          {history.hasMore && lastShown && (
            <p>
              <a href={`/dashboard/webhooks/${endpoint.id}?starting_after=${lastShown.id}`}>Older deliveries</a>
            </p>
          )}
        </section>
      </Layout>,
    );
  })
  .post("/webhooks/:id/on", async (c) => {
    const id = endpointId(c);
    // The partner's `POST /webhooks/{id}/enable`, for any side of the business.
    await enableEndpoint(c.var.deps, c.var.session.business.id, id);
    return c.redirect(`/dashboard/webhooks/${id}?switched=on`, 303);
  })
  .post("/webhooks/:id/ping", async (c) => {
    const id = endpointId(c);
    await sendPing(c.var.deps, c.var.session.business, id);
    return c.redirect(`/dashboard/webhooks/${id}`, 303);
  })
  .post("/webhooks/:id/deliveries/:deliveryId/send-again", async (c) => {
    const id = endpointId(c);
    // The partner's redelivery, for any side of the business: the row, then the queue once the page has answered.
    await sendDeliveryAgain(
      c.var.deps,
      c.var.session.business.id,
      id,
      idOrNotFound(c.req.param("deliveryId"), deliveryNotFound),
    );
    return c.redirect(`/dashboard/webhooks/${id}`, 303);
  })
  .get("/webhooks/:id/remove", async (c) => {
    const session = c.var.session;
    const endpoint = await endpointForOwner(c.var.deps, session.business.id, endpointId(c));
    const pending = endpoint.pendingDeliveries;
    return renderPage(
      c,
      200,
      <Layout title="Remove this webhook endpoint?" session={session}>
        <p>
          <code>{endpoint.url}</code> <CreatedBy creator={endpoint.creator} />
        </p>
        <Confirmation
          session={session}
          stops={
            <ul>
              <li>No event is sent to this address any more, from now on.</li>
              <li data-testid="pending">
                {pending === 0
                  ? "No delivery is waiting to be sent to it."
                  : `${pending} ${pending === 1 ? "delivery that is" : "deliveries that are"} still waiting to be sent will not be sent.`}
              </li>
              <li>Its delivery history is deleted with it.</li>
            </ul>
          }
          remains={
            <p>
              The events themselves, and every other endpoint. The partner can subscribe an endpoint again with its key
              or app, if it still has access.
            </p>
          }
          action={`/dashboard/webhooks/${endpoint.id}/remove`}
          confirm="Remove the endpoint"
          back={`/dashboard/webhooks/${endpoint.id}`}
        />
      </Layout>,
    );
  })
  .post("/webhooks/:id/remove", async (c) => {
    // Its deliveries go with it (foreign key cascade), so a message already on the queue finds nothing to send.
    await deleteEndpoint(c.var.deps, c.var.session.business.id, endpointId(c));
    return c.redirect("/dashboard/webhooks", 303);
  });
