import { z } from "@hono/zod-openapi";
import { recordId, timestamp } from "../lib/validation";
import { INTAKE_FIELD_TYPES } from "./intake-fields";

/** A question as the API answers it: `required` always, `options` only on `select`, `help` only when given. */
export const IntakeFieldObject = z
  .object({
    id: z.string(),
    label: z.string(),
    type: z.enum(INTAKE_FIELD_TYPES),
    required: z.boolean(),
    options: z.array(z.string()).optional(),
    help: z.string().optional(),
  })
  .openapi("IntakeField");

/** The intake, exactly these members (docs/intakes.md, The intake object). */
export const IntakeObject = z
  .object({
    id: recordId,
    name: z.string(),
    title: z.string(),
    description: z.string(),
    fields: z.array(IntakeFieldObject),
    enabled: z.boolean().openapi({ description: "Starts false. Only the business owner changes it" }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .openapi("Intake");

export type IntakeObject = z.infer<typeof IntakeObject>;
