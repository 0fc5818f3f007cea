import type { Context } from "hono";
import { Hono } from "hono";
import { deleteEndpoint, endpointNotFound } from "../../domain/webhooks/endpoints";
import { enableEndpoint } from "../../domain/webhooks/health";
import { ownerDeliveryHistory } from "../../domain/webhooks/owner-deliveries";
import { endpointForOwner, listEndpointsForOwner } from "../../domain/webhooks/owner-endpoints";
import { endSessionAsOwner, openSessionsForOwner, sessionNotFound } from "../../domain/webhooks/owner-sessions";
import { deliveryNotFound, sendDeliveryAgain } from "../../domain/webhooks/redelivery";
import { sendPing } from "../../domain/webhooks/test-events";
import { idOrNotFound, numericId } from "../../lib/validation";
import { renderPage } from "../../pages/page-shell";
import { CreatedBy } from "./created-by";
import type { DashboardEnv } from "./dashboard-env";
import { ButtonForm, Layout, Tag } from "./layout";
import { ListeningSessions } from "./listening-sessions";
import { removalPage } from "./removal-page";
import { When, WithTimes } from "./time-text";
import { DeliveryHistory } from "./webhook-deliveries";
import { eventsInWords } from "./webhook-event-words";

/** The page's endpoint id as the domain takes it, or the 404 page. */
const endpointId = (c: Context<DashboardEnv>) => idOrNotFound(c.req.param("id") ?? "", endpointNotFound);

/** On, or switched off by its health (docs/webhooks.md, Endpoint health): in the list and on the endpoint's page. */
const EndpointStatus = (props: { status: "enabled" | "disabled" }) => (
  <Tag good={props.status === "enabled"}>{props.status === "enabled" ? "On" : "Switched off"}</Tag>
);

/**
 * Webhook endpoints: their events, who added them and their health, the Test button (`ping`), each delivery with
 * every attempt and a Send again, switching a disabled endpoint back on, and the owner's removal of any endpoint,
 * whoever added it (docs/architecture.md, Principals and owner sides; docs/webhooks.md, Endpoint health).
 */
export const webhookPages = new Hono<DashboardEnv>()
  .get("/webhooks", async (c) => {
    const session = c.var.session;
    const [endpoints, sessions] = await Promise.all([
      listEndpointsForOwner(c.var.deps, session.business.id),
      openSessionsForOwner(c.var.deps, session.business.id),
    ]);
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
                <span class="muted">{eventsInWords(endpoint.events)}</span>
                <br />
                <CreatedBy creator={endpoint.creator} />
              </td>
              <td>
                <EndpointStatus status={endpoint.status} />
              </td>
            </tr>
          ))}
        </table>
        <ListeningSessions sessions={sessions} session={session} />
      </Layout>,
    );
  })
  .post("/listening-sessions/:id/end", async (c) => {
    await endSessionAsOwner(c.var.deps, c.var.session.business.id, idOrNotFound(c.req.param("id"), sessionNotFound));
    return c.redirect("/dashboard/webhooks", 303);
  })
  .get("/webhooks/:id", async (c) => {
    const session = c.var.session;
    const id = endpointId(c);
    // A page of 20 on either side of a delivery id, as the partner's `GET /webhooks/{id}/deliveries` pages, for the
    // whole business (the owner sees every side); a cursor that is no id is the newest page, and `newer` goes first.
    const older = numericId(c.req.query("older") ?? "");
    const newer = numericId(c.req.query("newer") ?? "");
    const cursor = newer !== undefined ? { newer } : older !== undefined ? { older } : {};
    const [endpoint, history] = await Promise.all([
      endpointForOwner(c.var.deps, session.business.id, id),
      ownerDeliveryHistory(c.var.deps, session.business.id, id, cursor, c.var.deps.clock()),
    ]);
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
          <p>Events: {eventsInWords(endpoint.events)}</p>
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
          {endpoint.disabledReason && (
            <p>
              Why it was switched off: <WithTimes text={endpoint.disabledReason} />
            </p>
          )}
          <p>
            Last successful delivery: <When at={endpoint.lastSuccessAt} precision="second" />
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
        <DeliveryHistory
          history={history}
          endpointId={endpoint.id}
          enabled={enabled}
          session={session}
          paged={cursor.older !== undefined || cursor.newer !== undefined}
        />
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
    const endpoint = await endpointForOwner(c.var.deps, c.var.session.business.id, endpointId(c));
    const pending = endpoint.pendingDeliveries;
    return removalPage(c, {
      title: "Remove this webhook endpoint?",
      named: (
        <>
          <code>{endpoint.url}</code> <CreatedBy creator={endpoint.creator} />
        </>
      ),
      at: `/dashboard/webhooks/${endpoint.id}`,
      confirm: "Remove the endpoint",
      stops: (
        <ul>
          <li>No event is sent to this address any more, from now on.</li>
          <li data-testid="pending">
            {pending === 0
              ? "No delivery is waiting to be sent to it."
              : `${pending} ${pending === 1 ? "delivery that is" : "deliveries that are"} still waiting to be sent will not be sent.`}
          </li>
          <li>Its delivery history is deleted with it.</li>
        </ul>
      ),
      remains: (
        <p>
          The events themselves, and every other endpoint. The partner can subscribe an endpoint again with its key or
          app, if it still has access.
        </p>
      ),
    });
  })
  .post("/webhooks/:id/remove", async (c) => {
    // Its deliveries go with it (foreign key cascade), so a message already on the queue finds nothing to send.
    await deleteEndpoint(c.var.deps, c.var.session.business.id, endpointId(c));
    return c.redirect("/dashboard/webhooks", 303);
  });
