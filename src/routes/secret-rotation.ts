import { z } from "@hono/zod-openapi";
import { runOperation } from "../admission/partner-admission";
import { actionNotFound } from "../domain/actions/reads";
import { endpointNotFound } from "../domain/webhooks/endpoints";
import { rotateActionSecretOperation, rotateEndpointSecretOperation } from "../domain/webhooks/webhook-operations";
import { idOrNotFound, pathId } from "../lib/validation";
import { ErrorBody, errorResponses } from "../schemas/error-body";
import { RotatedSecret, RotateSecretBody } from "../schemas/secret-rotation";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

/** The body may be left out: `expires_in` then takes its default. */
const rotation = (
  resource: "webhooks" | "actions",
  operationId: string,
  tag: string,
  noun: string,
  conflict?: string,
) =>
  partnerRoute({
    method: "post",
    path: `/${resource}/{id}/rotate-secret`,
    operationId,
    summary: `Rotate ${noun}'s signing secret`,
    description:
      `A new secret at once, shown once. The previous one keeps signing beside it for \`expires_in\` seconds: until ` +
      "then every request carries two signatures, `X-Service-Signature: t=…,v1=<new>,v1=<old>` and " +
      "`webhook-signature: v1,<new> v1,<old>`. Only the current and the newest previous secret are kept: a rotation " +
      "during another ends the older previous secret at once.",
    tags: [tag],
    request: { params: z.object({ id: pathId }), body: { required: false, content: json(RotateSecretBody) } },
    responses: {
      200: { description: "The new secret (shown once)", content: json(RotatedSecret) },
      ...errorResponses(400, 401, 403, 404),
      ...(conflict ? { 409: { description: conflict, content: json(ErrorBody) } } : {}),
    },
  });

const rotateEndpointRoute = rotation("webhooks", "rotateWebhookEndpointSecret", "Webhooks", "an endpoint");
const rotateActionRoute = rotation(
  "actions",
  "rotateActionSecret",
  "Connected actions",
  "an action",
  "The action is a tool of an MCP server, whose secret signs its calls: it has none of its own to rotate",
);

/**
 * Secret rotation of webhook endpoints and actions (docs/webhooks.md, Rotating a secret). Each is the credential,
 * then one UPDATE scoped by the partner's side: a write makes at most two round trips (docs/architecture.md,
 * Performance budget).
 */
export const secretRotation = createPartnerRouter()
  .openapi(rotateEndpointRoute, (c) =>
    runOperation(
      c,
      rotateEndpointSecretOperation,
      () => ({
        id: idOrNotFound(c.req.valid("param").id, endpointNotFound),
        expiresIn: c.req.valid("json").expires_in,
      }),
      (rotated) => c.json(rotated, 200),
    ),
  )
  .openapi(rotateActionRoute, (c) =>
    runOperation(
      c,
      rotateActionSecretOperation,
      () => ({ id: idOrNotFound(c.req.valid("param").id, actionNotFound), expiresIn: c.req.valid("json").expires_in }),
      (rotated) => c.json(rotated, 200),
    ),
  );
