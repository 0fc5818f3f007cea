import { z } from "@hono/zod-openapi";
import { queryId, recordId, timestamp } from "../lib/validation";
import { INTAKE_FIELD_TYPES } from "./intake-fields";

/** One answer: `proof` only on `email` and `phone` answers (docs/guides/intakes.md, Proof). */
export const AnswerObject = z
  .object({
    id: z.string().openapi({ description: "The intake field id" }),
    label: z.string(),
    type: z.enum(INTAKE_FIELD_TYPES),
    value: z.string().openapi({ description: "Every value is text" }),
    proof: z
      .enum(["verified", "stated"])
      .optional()
      .openapi({ description: "Only on email and phone answers: verified when the channel proved it" }),
  })
  .openapi("Answer");

/** One stored response (docs/guides/intakes.md, Reading responses). */
export const IntakeResponseObject = z
  .object({
    id: recordId.openapi({ description: "Equal to response_id in the intake.completed event" }),
    conversation: z.object({ id: z.string(), channel: z.string() }),
    answers: z.array(AnswerObject),
    status: z.enum(["completed"]),
    completed_at: timestamp,
    created_at: timestamp,
  })
  .openapi("IntakeResponse");

export type IntakeResponseObject = z.infer<typeof IntakeResponseObject>;

/** `before` is a response id; the page holds responses older than it (docs/intakes.md, Responses). */
export const ResponsesQuery = z.object({
  before: queryId("a response", "A response id; the page holds the responses older than it"),
});

export const ResponsesPage = z
  .object({
    data: z.array(IntakeResponseObject),
    next_before: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "Pass as before for the next page; null on the last page" }),
  })
  .openapi("IntakeResponsesPage");
