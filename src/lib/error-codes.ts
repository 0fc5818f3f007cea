/**
 * Every `code` an error body of the JSON API can carry, with its status and what a client does about it: the one
 * table of docs/errors.md and of the OpenAPI document's Error schema. A code names a kind of error and never
 * changes within `/api/v1` (docs/versioning.md); the sentence under `error` may be reworded at any time, so programs
 * branch on `code` and `param`, and people read `error`. `runtime`: a code only `/internal/v1` answers (the Secretary
 * runtime's API and the operators' move of a business), kept out of the partners' table.
 */
export const ERROR_CODES = {
  invalid_json: { status: 400, meaning: "The body is not valid JSON." },
  invalid_content_type: { status: 400, meaning: "The body was not sent as `application/json`." },
  parameter_missing: { status: 400, meaning: "A required parameter or field is absent; `param` names it." },
  parameter_invalid: {
    status: 400,
    meaning: "A parameter, field or header has the wrong type, format or value; `param` names it.",
  },
  invalid_request: {
    status: 400,
    meaning: "The request cannot be done as sent, though no one input is at fault (the sentence says why).",
  },
  authentication_required: { status: 401, meaning: "No credential was sent: send `Authorization: Bearer <key>`." },
  invalid_credential: {
    status: 401,
    meaning: "The key or token is malformed, unknown, revoked or expired; an access token is refreshed.",
  },
  plan_required: {
    status: 403,
    meaning: "The business's plan does not include the API, or has lapsed; it works again once the owner's plan does.",
  },
  limit_reached: {
    status: 403,
    meaning:
      "A limit of the business is reached (endpoints, actions, intakes, keys, knowledge sources); remove one first.",
  },
  forbidden: { status: 403, meaning: "This credential may not do this." },
  not_found: {
    status: 404,
    meaning: "Nothing of that id exists for this credential (including another key's or app's).",
  },
  route_not_found: { status: 404, meaning: "No endpoint is at this path: check the method, the path and `/api/v1`." },
  method_not_allowed: { status: 405, meaning: "The path does not take this method; `Allow` lists those it takes." },
  concurrent_change: {
    status: 409,
    meaning: "Another request changed the same record at the same moment: read it again, then send the change again.",
  },
  invalid_state: {
    status: 409,
    meaning: "The record's state refuses the request (for example a disabled endpoint): the sentence says which.",
  },
  idempotency_key_in_use: {
    status: 409,
    meaning: "A request with this `Idempotency-Key` is still running: retry once it has completed.",
  },
  body_too_large: { status: 413, meaning: "The body is larger than the service reads." },
  content_too_long: { status: 413, meaning: "Knowledge `content` is longer than 8,000 characters." },
  idempotency_key_reused: {
    status: 422,
    meaning: "This `Idempotency-Key` was used with another request: use a new key for a new request.",
  },
  rate_limited: {
    status: 429,
    meaning: "A rate limit is spent: wait for `Retry-After` seconds; `RateLimit` says which policy.",
  },
  internal_error: { status: 500, meaning: "A failure on the service's side: retry with a short backoff." },
  temporarily_unavailable: {
    status: 503,
    meaning: "The business's data is being moved or the service is briefly unable: retry after `Retry-After`.",
  },
  action_arguments_missing: {
    status: 422,
    meaning: "A required argument of the action is missing: ask the customer for it instead of calling.",
    runtime: true,
  },
  action_calls_exhausted: {
    status: 429,
    meaning: "The customer's message has had its 2 action calls: answer without another.",
    runtime: true,
  },
  move_conflict: {
    status: 409,
    meaning:
      "The target shard holds rows with the keys of the business's: the move was stopped and undone, and the sentence names the table.",
    runtime: true,
  },
  move_mismatch: {
    status: 409,
    meaning:
      "The copy differs from the business's rows in count or checksum: the move was stopped and undone, and the sentence names the table.",
    runtime: true,
  },
  move_in_progress: {
    status: 409,
    meaning: "Another move of the business is under way: the sentence says how to finish it or undo it.",
    runtime: true,
  },
} as const satisfies Record<string, { status: number; meaning: string; runtime?: true }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes partners can receive: the table of docs/errors.md and the reference. */
export const PARTNER_ERROR_CODES = (Object.keys(ERROR_CODES) as ErrorCode[]).filter(
  (code) => !("runtime" in ERROR_CODES[code]),
) as [ErrorCode, ...ErrorCode[]];
