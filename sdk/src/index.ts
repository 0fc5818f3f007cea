// @secretary/partner-sdk: the typed client of the Partner API, and the verification of what the service sends a
// partner (webhook deliveries, action calls). sdk/README.md says how to use it.
export type { ActionArgument, ActionCall, ActionCallChannel } from "./actions.ts";
export { verifyActionCall } from "./actions.ts";
export type {
  ApiErrorBody,
  ApiErrorCode,
  PagedPath,
  PageItem,
  PageQuery,
  PartnerClient,
  PartnerClientOptions,
} from "./client.ts";
export { createPartnerClient, DEFAULT_BASE_URL, PartnerApiError, paginate, unwrap } from "./client.ts";
export type { components, operations, paths, webhooks } from "./partner-api";
export type { HeadersLike, SignatureScheme, VerificationFailure, VerifyOptions } from "./signatures.ts";
export { verifySignedRequest, WebhookVerificationError } from "./signatures.ts";
export type { EventName, EventOf, WebhookEvent } from "./webhooks.ts";
export { verifyWebhook } from "./webhooks.ts";
