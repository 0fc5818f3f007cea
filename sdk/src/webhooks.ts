// Receiving webhooks (docs/webhooks.md): a delivery is verified over its raw body with the endpoint's secret, then
// answered as the document's event type, so that `switch (event.event)` types each event's `data`.
import type { webhooks } from "./partner-api.js";
import { type HeadersLike, parseVerifiedBody, type VerifyOptions, verifySignedRequest } from "./signatures.js";

/** An event's envelope as delivered: the request body of the document's `webhooks` entry of that name. */
export type EventOf<Name extends keyof webhooks> = NonNullable<
  webhooks[Name]["post"]["requestBody"]
>["content"]["application/json"];

/** The name of every event the service delivers. */
export type EventName = keyof webhooks;

/** Any event, told apart by its `event` member. */
export type WebhookEvent = { [Name in EventName]: EventOf<Name> }[EventName];

/**
 * Verifies a delivery and answers its envelope, typed. `rawBody` is the body exactly as received (`await
 * request.text()`), `headers` the request's. `secrets` is the endpoint's secret, or the current and previous ones
 * during a rotation (docs/webhooks.md, Rotating a secret). Throws a `WebhookVerificationError` whose `reason` says
 * why: answer it with a 400 and do not act on the body.
 *
 * The same event can arrive more than once and out of order: drop duplicates by `event.id` (docs/webhooks.md, The
 * request).
 */
export async function verifyWebhook(
  rawBody: string,
  headers: HeadersLike,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): Promise<WebhookEvent> {
  await verifySignedRequest(rawBody, headers, secrets, options);
  return parseVerifiedBody(rawBody) as WebhookEvent;
}
