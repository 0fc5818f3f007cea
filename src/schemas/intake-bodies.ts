import { z } from "@hono/zod-openapi";
import { IntakeFields } from "./intake-fields";
import { identifier, text } from "./intake-text";

// The bodies a partner sends to create and change an intake (spec: Intakes); its questions' rules are intake-fields.ts.

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

/** Spec, Intakes: `POST /intakes` body. */
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
 * Spec, Intakes: `PATCH /intakes/{id}` accepts `title`, `description`, `fields` (the whole list); `name` and
 * `enabled` may be sent back unchanged (the domain compares them with the stored values).
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
