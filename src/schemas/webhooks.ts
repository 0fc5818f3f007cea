import { z } from "@hono/zod-openapi";
import { ALL_EVENTS, EVENT_NAMES } from "../domain/platform/event-catalog";
import { timestamp } from "../lib/validation";

const EventName = z
  .enum([ALL_EVENTS, ...EVENT_NAMES], {
    error: (issue) =>
      typeof issue.input === "string"
        ? `is "${issue.input}", which is not an event name (GET /webhooks lists them)`
        : "must be an event name",
  })
  .openapi({ description: 'An event name, or "*" for every event except opt-in ones (intake.completed)' });

/** Spec, Webhooks: `POST /webhooks` body. Other keys are ignored. */
export const CreateWebhookEndpointBody = z
  .object({
    url: z
      .string()
      .max(2048)
      .openapi({ description: "https only", example: "https://partner.example/hooks/secretary" }),
    events: z.array(EventName).min(1).max(32).optional().openapi({ description: 'Omitted means ["*"]' }),
    description: z.string().max(500).optional(),
  })
  .openapi("CreateWebhookEndpoint");

/** DESIGN.md, Webhook endpoint record. */
export const WebhookEndpointObject = z
  .object({
    id: z.number().int(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string(),
    created_at: timestamp,
  })
  .openapi("WebhookEndpoint");

export const CreatedWebhookEndpoint = WebhookEndpointObject.extend({
  secret: z.string().openapi({ description: "Shown once: it keys X-Service-Signature (docs/webhooks.md)" }),
}).openapi("CreatedWebhookEndpoint");
