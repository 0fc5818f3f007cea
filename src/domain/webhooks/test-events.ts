import type { Database } from "../../db/client";
import type { BusinessLimits } from "../../durable-objects/business-limits";
import type { Principal } from "../access/principals";
import { takeTestEvent } from "./endpoint-budgets";
import type { WebhookEndpoint } from "./endpoints";
import type { EventName } from "./event-catalog";
import { type EmittedEvent, writeEvents } from "./events";
import { sampleEvent } from "./samples";

/**
 * `POST /webhooks/{id}/test` (docs/webhooks.md, Test events), once the endpoint was read with the credential: the
 * endpoint's budget (shared with redeliveries) and the business's budget of test events, which re-creating the endpoint
 * does not renew (429), then a sample of the event type, marked `"test": true`, written to the outbox for that endpoint
 * alone, whatever it subscribed to (as the dashboard's `ping`). Its audience is the endpoint's side (`audienceOf`), so
 * the Events API lists it to that side, as delivered.
 */
export async function sendTestEvent(
  limits: DurableObjectNamespace<BusinessLimits>,
  db: Database,
  principal: Principal,
  endpoint: WebhookEndpoint,
  event: EventName,
) {
  const budget = await takeTestEvent(limits, principal.business.id, endpoint.id);
  const { emitted, deliveryIds } = await writeEvents(
    db,
    principal.business,
    [endpoint],
    [{ ...sampleEvent(event), endpointId: endpoint.id, test: true }],
  );
  // One draft, one event.
  const [{ id }] = emitted as [EmittedEvent];
  return { eventId: id, deliveryIds, budget };
}
