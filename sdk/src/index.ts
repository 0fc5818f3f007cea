// @secretary/partner-sdk: the typed client of the Partner API, and the verification of what the service sends a
// partner (webhook deliveries, action calls). README.md says how to use it.
export type { ActionArgument, ActionCall, ActionCallChannel } from "./actions.js";
export { verifyActionCall } from "./actions.js";
export type { AppCredentials, AppToken } from "./app-token.js";
export { requestAppToken } from "./app-token.js";
export type { ApiErrorBody, ApiErrorCode, PartnerClient, PartnerClientOptions } from "./client.js";
export { createPartnerClient, DEFAULT_BASE_URL, PartnerApiError, unwrap } from "./client.js";
export type { PagedPath, PageItem, PagePathParams, PageQuery } from "./paging.js";
export { paginate } from "./paging.js";
export type { components, operations, paths, webhooks } from "./partner-api.js";
export type { Fetch, RetryOptions } from "./requests.js";
export type { HeadersLike, SignatureScheme, VerificationFailure, VerifyOptions } from "./signatures.js";
export { verifySignedRequest, WebhookVerificationError } from "./signatures.js";
export { VERSION } from "./version.js";
export type { EventName, EventOf, WebhookEvent } from "./webhooks.js";
export { verifyWebhook } from "./webhooks.js";
