import { and, eq } from "drizzle-orm";
import type { Database } from "../../db/client";
import { type Read, read } from "../../db/reads";
import { webhookEndpoints } from "../../db/schema";
import { type Placeheld, type ShapedArgument, statement } from "../../db/statements";
import { conflict } from "../../lib/api-error";
import { type Reach, reachArgument, reached, type SqlReach } from "../access/scope";
import { endpointNotFound, type WebhookEndpoint } from "./endpoints";

/*
 * The endpoint that a send on demand (a redelivery, a recover, a test event, the owner's Send again) goes to, and
 * whose deliveries are listed: one within reach (a partner's own side, or any side of the owner's business:
 * docs/architecture.md, Principals and owner sides); to be sent to, also enabled, since a disabled endpoint gets no
 * new deliveries (docs/webhooks.md, Endpoint health).
 */

export type EndpointArguments = { reach: ShapedArgument<SqlReach>; endpoint: number };

const isWithinReach = ({ reach, endpoint }: Placeheld<EndpointArguments>) =>
  and(eq(webhookEndpoints.id, endpoint), reached(webhookEndpoints, reach));

/** The endpoint `endpoint` if it is within reach: another side's or business's reads as a missing one. */
export const endpointWithin = statement<EndpointArguments>()((db, args) =>
  db.select().from(webhookEndpoints).where(isWithinReach(args)),
);

/**
 * The endpoint's id while it is within reach, as a sub-select of the statement that reads its deliveries: one out of
 * reach gives NULL, so the statement reads nothing at all.
 */
export const reachedEndpointId = (db: Database, args: Placeheld<EndpointArguments>) =>
  db.select({ id: webhookEndpoints.id }).from(webhookEndpoints).where(isWithinReach(args));

/**
 * The same, only while the endpoint is also enabled, for the statement that writes deliveries to it: an endpoint
 * removed, disabled or out of reach since it was read gets none.
 */
export const sendableEndpointId = (db: Database, args: Placeheld<EndpointArguments>) =>
  db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(and(isWithinReach(args), eq(webhookEndpoints.status, "enabled")));

/**
 * A delivery on demand to a disabled endpoint is refused rather than written and never sent: the partner enables the
 * endpoint first (`POST /webhooks/{id}/enable`), then recovers what it missed.
 */
export const endpointDisabled = () =>
  conflict("The webhook endpoint is disabled: nothing is sent to it until it is enabled again.", "invalid_state");

/** The endpoint as read by `endpointWithin`, if something can be sent to it; else its 404 or 409. */
export function assertSendable(endpoint: WebhookEndpoint | undefined): WebhookEndpoint {
  if (!endpoint) throw endpointNotFound();
  if (endpoint.status !== "enabled") throw endpointDisabled();
  return endpoint;
}

/** The endpoint to send to, read with the credential (one round trip with it): 404 or 409 otherwise. */
export const sendableEndpoint = (reach: Reach, endpointId: number): Read<WebhookEndpoint> =>
  read(endpointWithin({ reach: reachArgument(reach), endpoint: endpointId }), ([endpoint]) => assertSendable(endpoint));
