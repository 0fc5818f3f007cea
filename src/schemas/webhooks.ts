import { z } from "@hono/zod-openapi";
import { ENDPOINT_STATUSES } from "../db/schema";
import { recordId, timestamp, visibleText } from "../lib/validation";
import { ALL_EVENTS, EVENT_NAMES } from "../names-and-limits";

const EventName = z
  .enum([ALL_EVENTS, ...EVENT_NAMES], {
    error: (issue) =>
      typeof issue.input === "string"
        ? `is "${issue.input}", which is not an event name (GET /webhooks lists them)`
        : "must be an event name",
  })
  .openapi({ description: 'An event name, or "*" for every event except opt-in ones (intake.completed)' });

const EndpointUrl = z
  .string()
  .max(2048)
  .openapi({ description: "https only", example: "https://partner.example/hooks/secretary" });

export const EndpointEvents = z.array(EventName).min(1).max(32);

// Shown to the owner: lines allowed, nothing hidden (docs/security.md, "Partner text").
const EndpointDescription = z
  .string()
  .max(500)
  .superRefine(visibleText({ lines: true }));

/** The `POST /webhooks` body (docs/guides/webhooks.md, Subscribing). Other keys are ignored. */
export const CreateWebhookEndpointBody = z
  .object({
    url: EndpointUrl,
    events: EndpointEvents.optional().openapi({ description: 'Omitted means ["*"]' }),
    description: EndpointDescription.optional(),
  })
  .openapi("CreateWebhookEndpoint");

const PATCHABLE = ["url", "events", "description"] as const;

/**
 * `PATCH /webhooks/{id}` (docs/webhooks.md, Reading and changing an endpoint): any of the three members of the
 * creation, checked by the same rules, and at least one. An unknown key is ignored, as by every operation, and named
 * in the answer's `Ignored-Members` header: a misspelt `event`, or `status` or `secret` (set by POST
 * /webhooks/{id}/enable, /rotate-secret), is seen there (docs/guides/errors.md, Unknown members). `description` is a string,
 * `""` to clear it, never null: the record's description is always a string.
 */
export const PatchWebhookEndpointBody = z
  .object({
    url: EndpointUrl.optional(),
    events: EndpointEvents.optional().openapi({ description: "Replaces the subscription, for events from now on" }),
    description: EndpointDescription.optional().openapi({ description: '"" clears it' }),
  })
  .refine((body) => PATCHABLE.some((member) => body[member] !== undefined), {
    error: `must change at least one of ${PATCHABLE.join(", ")}`,
  })
  .openapi("PatchWebhookEndpoint", { minProperties: 1 });

/**
 * The endpoint record, `{ id, url, events, description, created_at }` (its secret only in the 201), with its health
 * (docs/webhooks.md, Endpoint health).
 */
export const WebhookEndpointObject = z
  .object({
    id: recordId,
    url: z.string(),
    events: z.array(z.string()),
    description: z.string(),
    status: z.enum(ENDPOINT_STATUSES).openapi({
      description:
        '"disabled" after it answered 410 Gone, or after every delivery to it failed for 3 days (at least 10 failed, none delivered): it gets no new deliveries until POST /webhooks/{id}/enable',
    }),
    disabled_reason: z
      .string()
      .nullable()
      .openapi({ description: "Why it was disabled, in a sentence; null while enabled" }),
    last_success_at: timestamp.nullable().openapi({ description: "When a delivery to it last got a 2xx; null: never" }),
    created_at: timestamp,
  })
  .openapi("WebhookEndpoint");

export const CreatedWebhookEndpoint = WebhookEndpointObject.extend({
  secret: z.string().openapi({ description: "Shown once: it keys X-Service-Signature (docs/webhooks.md)" }),
}).openapi("CreatedWebhookEndpoint");
