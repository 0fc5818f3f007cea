import { z } from "@hono/zod-openapi";
import { runOperation } from "../../admission/partner-admission";
import { endpointNotFound } from "../../domain/webhooks/endpoints";
import { enableEndpointOperation } from "../../domain/webhooks/webhook-operations";
import { idOrNotFound, pathId } from "../../lib/validation";
import { errorResponses } from "../../schemas/error-body";
import { WebhookEndpointObject } from "../../schemas/webhooks";
import { createPartnerRouter, partnerRoute } from "../partner-router";

const enableRoute = partnerRoute({
  method: "post",
  path: "/webhooks/{id}/enable",
  operationId: "enableWebhookEndpoint",
  summary: "Enable a disabled endpoint",
  description:
    "An endpoint is disabled when it answers 410 Gone, or when every delivery to it failed for 3 days (at least 10 failed, none delivered). Enabled again, it receives new events; `recover` sends again what failed meanwhile. Enabling an enabled endpoint changes nothing.",
  tags: ["Webhooks"],
  request: { params: z.object({ id: pathId }) },
  responses: {
    200: {
      description: "The endpoint, enabled",
      content: { "application/json": { schema: WebhookEndpointObject } },
    },
    ...errorResponses(401, 403, 404),
  },
});

/**
 * Endpoint health, `POST /webhooks/{id}/enable` (docs/webhooks.md, Endpoint health). Two round trips: the credential,
 * the update.
 */
export const webhookHealth = createPartnerRouter().openapi(enableRoute, (c) =>
  runOperation(
    c,
    enableEndpointOperation,
    () => idOrNotFound(c.req.valid("param").id, endpointNotFound),
    (endpoint) => c.json(endpoint, 200),
  ),
);
