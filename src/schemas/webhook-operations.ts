import { z } from "@hono/zod-openapi";
import { DELIVERY_STATUSES } from "../db/schema";
import { numericPathId, pathId, queryId, queryInteger, recordId, timestamp } from "../lib/validation";
import { EVENT_NAMES } from "../names-and-limits";
import { ErrorBody } from "./error-body";

/*
 * What a partner operates its integration with (docs/webhooks.md, Operating your integration): events, the
 * deliveries of an endpoint, redelivery, recover and test events, in the API's own naming (snake_case, like bookings
 * and orders).
 */

/** One event name (no `*`): the `type` of a listing, the `event` of a test event. */
export const OneEventName = z.enum(EVENT_NAMES, {
  error: (issue) =>
    typeof issue.input === "string"
      ? `is "${issue.input}", which is not an event name (GET /webhooks lists them)`
      : "must be an event name",
});

/** An event id: `evt_` and an opaque part, ours base64url (docs/guides/webhooks.md, The request). */
const EVENT_ID = /^evt_[A-Za-z0-9_-]{1,64}$/;

const limit = queryInteger({ min: 1, max: 100, default: 25 });

/** The envelope (docs/guides/webhooks.md, The request): `test` on a test event, `sandbox` on a sandbox business's. */
export const EnvelopeObject = z
  .object({
    id: z.string().openapi({ description: "evt_ and an opaque part; drop duplicates by it", example: "evt_3kTfQ9x" }),
    event: z.enum(EVENT_NAMES),
    created_at: timestamp,
    business: z.object({ id: z.string(), handle: z.string(), name: z.string() }),
    // Any JSON value per member: the shape is the event's (docs/guides/webhooks.md, The events).
    data: z.record(z.string(), z.any()).openapi({ description: "Per event: the event's own members" }),
    test: z.literal(true).optional().openapi({ description: "Only on a sample sent by POST /webhooks/{id}/test" }),
    sandbox: z
      .literal(true)
      .optional()
      .openapi({ description: "Only on the events of a sandbox business (docs/guides/sandbox.md)" }),
  })
  .openapi("Event");

export const EventsQuery = z.object({
  type: OneEventName.optional().openapi({ description: "Only events of this name" }),
  limit,
  starting_after: z
    .string()
    .regex(EVENT_ID, { error: "must be an event id: evt_ followed by letters, digits, _ or -" })
    .optional()
    .openapi({ description: "The id of the last event of the previous page" }),
});

export const EventsPage = z
  .object({
    data: z.array(EnvelopeObject).openapi({ description: "Each envelope exactly as it was delivered" }),
    has_more: z.boolean().openapi({ description: "Whether older events follow: pass the last id as starting_after" }),
  })
  .openapi("EventsPage");

export const EventPath = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "evt_3kTfQ9x" }),
});

export const DeliveriesQuery = z.object({
  status: z
    .enum(DELIVERY_STATUSES, { error: "must be pending, delivered or failed" })
    .optional()
    .openapi({ description: "Only deliveries in this state" }),
  limit,
  starting_after: queryId("a delivery", "The id of the last delivery of the previous page"),
});

export const DeliveryAttemptObject = z
  .object({
    attempted_at: timestamp,
    status_code: z.number().int().nullable().openapi({ description: "The endpoint's HTTP status; null without one" }),
    error: z.string().nullable().openapi({ description: "Why the attempt failed; null on success" }),
    duration_ms: z.number().int(),
  })
  .openapi("DeliveryAttempt");

export const DeliveryObject = z
  .object({
    id: recordId.openapi({ description: "The X-Service-Delivery header of its requests" }),
    event_id: z.string(),
    event: z.string(),
    status: z.enum(DELIVERY_STATUSES),
    attempts: z.array(DeliveryAttemptObject).openapi({ description: "Oldest first" }),
    next_attempt_at: timestamp.nullable().openapi({ description: "When the next attempt is due; null once finished" }),
    created_at: timestamp,
  })
  .openapi("Delivery");

export const DeliveriesPage = z
  .object({
    data: z.array(DeliveryObject),
    has_more: z
      .boolean()
      .openapi({ description: "Whether older deliveries follow: pass the last id as starting_after" }),
  })
  .openapi("DeliveriesPage");

export const DeliveryPath = z.object({
  id: pathId,
  delivery_id: numericPathId("delivery_id"),
});

export const Redelivery = z
  .object({
    delivery_id: recordId.openapi({
      description: "The delivery redelivered (its X-Service-Delivery): the attempt shows among its attempts",
    }),
    event_id: z.string().openapi({ description: "The envelope id of the delivery's event" }),
  })
  .openapi("Redelivery");

export const RecoverBody = z
  .object({
    since: timestamp.openapi({
      description: "Every delivery created at or after this time and not delivered is sent now; at most 30 days ago",
    }),
  })
  .openapi("RecoverDeliveries");

export const Recovery = z
  .object({
    queued: z.number().int().openapi({
      description:
        "How many deliveries are sent now: the failed ones, and the pending ones that had failed at least once",
    }),
  })
  .openapi("Recovery");

export const TestEventBody = z
  .object({
    event: OneEventName.optional().openapi({ description: "The event name to send a sample of", default: "ping" }),
  })
  .openapi("SendTestEvent");

export const TestEvent = z
  .object({ event_id: z.string().openapi({ description: "The sample's envelope id (GET /events/{id})" }) })
  .openapi("TestEvent");

/** A send to a disabled endpoint (docs/webhooks.md, Endpoint health): enable it first. */
export const endpointDisabledResponse = {
  409: {
    description: "The endpoint is disabled: enable it (POST /webhooks/{id}/enable), then send or recover",
    content: { "application/json": { schema: ErrorBody } },
  },
} as const;
