import { z } from "@hono/zod-openapi";
import { ERROR_CODES, PARTNER_ERROR_CODES } from "../lib/error-codes";

/** The table of codes, as the reference shows it under `code`: one line per code, its status and its meaning. */
const CODE_TABLE = PARTNER_ERROR_CODES.map(
  (code) => `- \`${code}\` (${ERROR_CODES[code].status}): ${ERROR_CODES[code].meaning}`,
).join("\n");

/** The one error body: the sentence under `error`, and what a program reads beside it (docs/errors.md). */
export const ErrorBody = z
  .object({
    error: z.string().openapi({
      description: "One sentence for a person: what was wrong and how to put it right. Its wording may change.",
      example: 'The query parameter "limit" must be a whole number from 1 to 100.',
    }),
    code: z.enum(PARTNER_ERROR_CODES).openapi({
      description: `The kind of error, stable within \`/api/v1\`: branch on it, not on the sentence.\n\n${CODE_TABLE}`,
      example: "parameter_invalid",
    }),
    param: z.string().optional().openapi({
      description:
        "The one input at fault, when one is: a query or path parameter, a header, or a body member in index notation (`fields[1].options`)",
      example: "limit",
    }),
    field: z.string().nullable().optional().openapi({
      description:
        "`/intakes` only, on every 400: the offending member, e.g. `fields[1].options` (as `param`), or null when the body as a whole is at fault",
    }),
    request_id: z.string().openapi({
      description: "The request's id, also in the `X-Request-Id` header of every answer: quote it when asking for help",
      example: "9f1c2a4e-5b7d-4c1e-8a3f-2d6b0e4c7a91",
    }),
  })
  .openapi("Error");

const DESCRIPTIONS = {
  400: "Invalid request: the message says which parameter or field, or that the body must be sent as application/json",
  401: "API key or access token missing, malformed, unknown or revoked",
  403: "The plan does not include the API or has lapsed, or a plan limit is reached",
  404: "Nothing of that id exists for this credential",
  409: "Another change of this intake landed at the same moment (PATCH /intakes/{id}); send the change again",
  413: "The body is too large",
  429: "Too many requests; see Retry-After",
} as const;

/** The error responses a route documents, each with the one error body of the API (docs/errors.md). */
export function errorResponses<Status extends keyof typeof DESCRIPTIONS>(...statuses: Status[]) {
  const responses = {} as Record<
    Status,
    { description: string; content: { "application/json": { schema: typeof ErrorBody } } }
  >;
  for (const status of statuses) {
    responses[status] = { description: DESCRIPTIONS[status], content: { "application/json": { schema: ErrorBody } } };
  }
  return responses;
}
