import { z } from "@hono/zod-openapi";
import { IntakeFields } from "./intake-fields";
import { identifier, text } from "./intake-text";

// The bodies a partner sends to create and change an intake (docs/intakes.md); its questions' rules: intake-fields.ts.

const IntakeTexts = {
  title: text(3, 80, { lines: false }).openapi({
    description: "Shown to the owner in their dashboard",
    example: "Quote request",
  }),
  description: text(20, 500, { lines: true }).openapi({
    description: "Read by the Secretary to decide when to start the intake: say when, and when not",
    example: "When a customer asks for a quote for a kitchen renovation. Not for repairs or existing orders.",
  }),
  fields: IntakeFields,
};

/** The `POST /intakes` body (docs/guides/intakes.md, Registering an intake). */
export const CreateIntakeBody = z
  .object({
    name: identifier(3, 40).openapi({
      description: "Unique within the business; cannot be changed after creation",
      example: "quote_request",
    }),
    ...IntakeTexts,
  })
  .openapi("CreateIntake");

export type CreateIntakeInput = z.output<typeof CreateIntakeBody>;

/**
 * `PATCH /intakes/{id}` takes `title`, `description`, `fields` (the whole list); `name` and `enabled` may be sent
 * back unchanged, which the domain compares with the stored values (docs/intakes.md, PATCH).
 */
export const PatchIntakeBody = z
  .object({
    name: z.string().optional().openapi({ description: "May be sent back unchanged; a different value is a 400" }),
    title: IntakeTexts.title.optional(),
    description: IntakeTexts.description.optional(),
    fields: IntakeFields.optional().openapi({ description: "Replaces the whole list" }),
    enabled: z.boolean().optional().openapi({ description: "May be sent back unchanged; only the owner changes it" }),
  })
  .openapi("PatchIntake");

export type PatchIntakeInput = z.output<typeof PatchIntakeBody>;
