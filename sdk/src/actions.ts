// Implementing a connected action (docs/guides/connected-actions.md, The request to your URL): each call is a POST
// signed exactly as a webhook delivery, with the action's secret; its `webhook-id` and `X-Service-Call` are the call
// id (docs/webhooks.md, Action calls). The OpenAPI document describes /api/v1, not this request, so its body's type
// is written here, after the body src/domain/actions/calls.ts sends (test/sdk/actions.test.ts compares them).
import { type HeadersLike, parseVerifiedBody, type VerifyOptions, verifySignedRequest } from "./signatures.js";

/** Where the customer writes from; `dashboard_test` for the owner's Test button. Actions never run on phone calls. */
export type ActionCallChannel =
  | "chat_page"
  | "website_widget"
  | "whatsapp"
  | "sms"
  | "telegram"
  | "instagram"
  | "messenger"
  | "email"
  | "mcp"
  | "dashboard_test";

/** A value of an argument: the parameter types an action may declare are string, number, integer and boolean. */
export type ActionArgument = string | number | boolean;

/**
 * The body of a call. `arguments` holds only parameters the action declares, each of its type; an optional one the
 * Secretary has no value for is left out. Nothing else about the customer is sent.
 */
export type ActionCall<Arguments extends object = Record<string, ActionArgument>> = {
  /** The call's id, also in `X-Service-Call` and `webhook-id`: the same in the action's call history. */
  call_id: number;
  /** The action's `name`. */
  action: string;
  arguments: Arguments;
  business: { id: string; handle: string };
  conversation: { id: string; channel: ActionCallChannel };
  /** ISO 8601, UTC. */
  created_at: string;
};

/**
 * Verifies a call of your action and answers its body, typed: `Arguments` is your action's parameters, e.g.
 * `verifyActionCall<{ sku: string; size?: "S" | "M" | "L" }>(...)` (checked by the service against the parameters
 * the owner approved before it calls). `secrets` is the action's secret, or the current and previous ones during a
 * rotation. Throws a `WebhookVerificationError` whose `reason` says why: answer it with a 400. A call is made once and
 * never retried, and must be answered within 5 seconds (docs/guides/connected-actions.md, The answer rules).
 */
export async function verifyActionCall<Arguments extends object = Record<string, ActionArgument>>(
  rawBody: string,
  headers: HeadersLike,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): Promise<ActionCall<Arguments>> {
  await verifySignedRequest(rawBody, headers, secrets, options);
  return parseVerifiedBody(rawBody) as ActionCall<Arguments>;
}
