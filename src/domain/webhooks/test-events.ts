import { runRead } from "../../db/reads";
import type { Dependencies } from "../../dependencies";
import type { EventName } from "../../names-and-limits";
import type { Business } from "../access/businesses";
import type { Principal } from "../access/principals";
import { takeTestEvent } from "./endpoint-budgets";
import type { WebhookEndpoint } from "./endpoints";
import { type EmittedEvent, writeEvents } from "./outbox/write";
import { sampleEvent } from "./samples";
import { sendableEndpoint } from "./sendable-endpoint";

/**
 * `POST /webhooks/{id}/test` (docs/webhooks.md, Test events), once the endpoint was read with the credential: the
 * endpoint's budget (shared with redeliveries) and the business's budget of test events, which re-creating the endpoint
 * does not renew (429), then a sample of the event type, marked `"test": true`, written to the outbox for that endpoint
 * alone, whatever it subscribed to (as the dashboard's `ping`). Its audience is the endpoint's side (`audienceOf`), so
 * the Events API lists it to that side, as delivered.
 */
export async function sendTestEvent(
  deps: Dependencies,
  principal: Principal,
  endpoint: WebhookEndpoint,
  event: EventName,
) {
  const budgets = await takeTestEvent(deps, principal.business, endpoint.id);
  const { emitted, deliveryIds } = await writeEvents(
    deps,
    principal.business,
    [endpoint],
    [{ ...sampleEvent(event), endpointId: endpoint.id, test: true }],
  );
  // One draft, one event.
  const [{ id }] = emitted as [EmittedEvent];
  deps.enqueue(deliveryIds);
  return { eventId: id, deliveryIds, budgets };
}

/** The dashboard's Test button: `ping` `{ message }` (docs/guides/webhooks.md, The events), to that endpoint only. */
export async function sendPing(deps: Dependencies, business: Business, endpointId: number) {
  // A disabled endpoint is a 409, as for the partner's test events: a ping would be written and never sent.
  const endpoint = await runRead(deps.db, sendableEndpoint(business.id, endpointId));
  const { emitted, deliveryIds } = await writeEvents(
    deps,
    business,
    [endpoint],
    [{ event: "ping", data: { message: `Test event from ${business.name}'s dashboard.` }, endpointId }],
  );
  deps.enqueue(deliveryIds);
  return { event: emitted[0], deliveryId: deliveryIds[0] };
}
