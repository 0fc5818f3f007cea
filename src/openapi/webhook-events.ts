import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { OPT_IN_EVENTS } from "../domain/webhooks/event-catalog";
import { EVENT_NAMES, type EventName } from "../names-and-limits";
import { eventEnvelope, pascalCase } from "../schemas/events";

/*
 * The document's `webhooks` (OpenAPI 3.1): what a partner's endpoint receives, one entry per event name, so that typed
 * event handlers come from the same file as the typed client (docs/decisions.md, The contract in a partner's tools).
 * The request, and the answer expected, are those of docs/webhooks.md, The request.
 */

const deliveryHeaders = (event: EventName) =>
  z.object({
    "X-Service-Event": z.literal(event).openapi({ description: "The event name, as in the envelope" }),
    "X-Service-Delivery": z.string().openapi({
      description: "The delivery id (a number), the same for every attempt of one delivery",
      example: "8812",
    }),
    "X-Service-Signature": z.string().openapi({
      description:
        'Stripe\'s scheme: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed by the whole whsec_ secret>`; two `v1=` during a secret rotation',
      example: "t=1795338600,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
    }),
    "webhook-id": z.string().openapi({ description: "Standard Webhooks: the envelope's id (evt_…)" }),
    "webhook-timestamp": z.string().openapi({ description: "Standard Webhooks: the same unix seconds as t" }),
    "webhook-signature": z.string().openapi({
      description:
        'Standard Webhooks: `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`; two, separated by a space, during a rotation',
    }),
  });

/**
 * Who receives the event (docs/guides/intakes.md, intake.completed: opt-in, only to the intake's owner;
 * docs/architecture.md, Lifecycle events: only to the owner side concerned; src/domain/webhooks/test-events.ts: `ping`
 * to the one endpoint tested), and what a receiver does first. Any event also comes as a sample, marked `test`, from
 * `POST /webhooks/{id}/test`.
 */
function description(event: EventName) {
  const owner = /^(action|intake)\./.test(event) ? ", of the key or app that owns the action or intake only" : "";
  const to =
    event === "ping"
      ? "Sent to one endpoint when the owner presses its Test button in the dashboard, whatever it subscribed to."
      : `Sent to the endpoints subscribed to \`${event}\` ${OPT_IN_EVENTS.has(event) ? "by name (`*` does not include it)" : "or to `*`"}${owner}.`;
  return `${to} Verify one of the two signatures before trusting the body, and drop duplicates by the envelope id.`;
}

export function registerWebhookEvents(registry: OpenAPIHono["openAPIRegistry"]) {
  for (const event of EVENT_NAMES) {
    registry.registerWebhook({
      method: "post",
      path: event,
      operationId: `on${pascalCase(event)}`,
      summary: event,
      description: description(event),
      tags: ["Events"],
      // Not the API's bearer token: the receiver authenticates the request by its signature headers, which OpenAPI
      // has no security scheme for (an HMAC over the body), so they are documented as parameters.
      security: [],
      request: {
        headers: deliveryHeaders(event),
        body: { required: true, content: { "application/json": { schema: eventEnvelope(event) } } },
      },
      responses: {
        "2XX": { description: "Received: any 2xx within 10 seconds; do the work afterwards" },
        default: {
          description:
            "A failure, as is a redirect or no answer within 10 seconds: retried after 1, 5, 30, 120 and 720 minutes",
        },
      },
    });
  }
}
