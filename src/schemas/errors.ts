import { z } from "@hono/zod-openapi";

export const ErrorBody = z
  .object({
    error: z.string().openapi({ example: 'The query parameter "limit" must be a whole number from 1 to 100.' }),
    field: z
      .string()
      .optional()
      .openapi({ description: "Intake validation only: the offending member, e.g. `fields[1].options`" }),
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

/** The error responses a route documents, each with the one error body of the API (spec: Errors). */
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
