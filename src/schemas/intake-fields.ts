import { z } from "@hono/zod-openapi";
import type { IntakeField } from "../db/schema";
import { characterCount, hiddenCharacterProblem } from "../lib/text";
import { isNotDataName, notDataNameRule } from "../lib/validation";
import { IDENTIFIER, IDENTIFIER_RULE, text } from "./intake-text";

/*
 * An intake's questions (docs/intakes.md, Validation). Every rule is a zod check whose issue carries the member's
 * path, so that `rejectInvalidNamingField` answers 400 `{ error, field }` in index notation (`fields[1].options`),
 * the first problem in body order.
 */

/** The seven question types, each with what it accepts (docs/guides/intakes.md, Answers). */
export const ACCEPTED_ANSWERS: Record<IntakeField["type"], string> = {
  text: "A short answer",
  textarea: "A longer answer",
  number: "A number",
  email: "An email address",
  phone: "A phone number with its country code",
  date: "A date",
  select: "One of the options",
};

export const INTAKE_FIELD_TYPES = Object.keys(ACCEPTED_ANSWERS) as [IntakeField["type"], ...IntakeField["type"][]];

/**
 * A question id is the key of its answer wherever answers travel as an object (the runtime's answers call), so it is a
 * name of data: `constructor`, `prototype` and every other name an object inherits are refused (`isNotDataName`, the
 * one list actions' parameter names use too; docs/intakes.md). Checked before the pattern, so that `toString` or
 * `__proto__` is told why, as a parameter named so is.
 */
const questionId = z
  .string()
  .min(1)
  .max(40)
  .refine((id) => !isNotDataName(id), { error: `is ${notDataNameRule("a question id")}` })
  .regex(IDENTIFIER, { error: IDENTIFIER_RULE });

/** `options`: 2 to 20 different choices, each up to 80 characters (docs/intakes.md, Validation). */
export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 20;
const OPTION_CHARS = 80;

/** Two choices are the same when they differ only in case or surrounding spaces ("Red", "red ") (docs/intakes.md). */
export const choiceKey = (choice: string) => choice.normalize("NFC").trim().toLowerCase();

/**
 * The rules of a question that depend on more than one key: `options` only on `select`, and on `select` 2 to 20
 * choices, each 1 to 80 characters, no two the same. Checked here rather than on the array itself, so that a list
 * sent with a `text` question is refused for being there, not for its length.
 */
function checkOptions(field: { type: string; options?: string[] | null }, ctx: z.RefinementCtx) {
  const { options } = field;
  if (field.type !== "select") {
    if (options != null) {
      ctx.addIssue({ code: "custom", path: ["options"], message: 'is allowed only on a question of type "select"' });
    }
    return;
  }
  if (options == null) {
    ctx.addIssue({
      code: "custom",
      path: ["options"],
      message: `is required on a question of type "select": ${MIN_OPTIONS} to ${MAX_OPTIONS} choices`,
    });
    return;
  }
  if (options.length < MIN_OPTIONS || options.length > MAX_OPTIONS) {
    const tooFew = options.length < MIN_OPTIONS;
    ctx.addIssue({
      code: tooFew ? "too_small" : "too_big",
      origin: "array",
      path: ["options"],
      input: options,
      inclusive: true,
      ...(tooFew ? { minimum: MIN_OPTIONS } : { maximum: MAX_OPTIONS }),
    } as z.core.$ZodRawIssue);
    return;
  }
  const seen = new Map<string, number>();
  options.forEach((choice, index) => {
    const path = ["options", index];
    const chars = characterCount(choice);
    if (chars < 1)
      ctx.addIssue({ code: "too_small", origin: "string", minimum: 1, inclusive: true, input: choice, path });
    else if (chars > OPTION_CHARS) {
      ctx.addIssue({ code: "too_big", origin: "string", maximum: OPTION_CHARS, inclusive: true, input: choice, path });
    } else if (choice.trim() === "")
      ctx.addIssue({ code: "custom", message: "must not be blank", input: choice, path });
    else {
      const hidden = hiddenCharacterProblem(choice, { lines: false });
      if (hidden) ctx.addIssue({ code: "custom", message: hidden, input: choice, path });
    }
    const key = choiceKey(choice);
    const first = seen.get(key);
    if (first !== undefined) {
      ctx.addIssue({
        code: "custom",
        path,
        message: `repeats the choice ${JSON.stringify(options[first])} of options[${first}]; choices must differ (case is ignored)`,
      });
    } else seen.set(key, index);
  });
}

/**
 * One question. Keys the API does not know are dropped (zod strips them), never stored (docs/intakes.md, Validation).
 */
export const IntakeFieldInput = z
  .object({
    id: questionId.openapi({
      description: "Unique within the intake. Answers come back under it",
      example: "email",
    }),
    label: text(1, 80, { lines: false }).openapi({
      description: "The question",
      example: "What email address should we reply to?",
    }),
    type: z
      // A missing type reads like every other missing member; a wrong one lists the seven (lib/zod-messages.ts).
      .enum(INTAKE_FIELD_TYPES, { error: (issue) => (issue.input === undefined ? "is required" : undefined) })
      .openapi({
        description: Object.entries(ACCEPTED_ANSWERS)
          .map(([type, accepted]) => `${type}: ${accepted.toLowerCase()}`)
          .join("; "),
      }),
    required: z.boolean().optional().openapi({ default: false }),
    options: z
      .array(z.string())
      .nullish()
      .openapi({
        description: `Only for "select": ${MIN_OPTIONS} to ${MAX_OPTIONS} different choices, each up to ${OPTION_CHARS} characters`,
        minItems: MIN_OPTIONS,
        maxItems: MAX_OPTIONS,
        items: { type: "string", minLength: 1, maxLength: OPTION_CHARS },
      }),
    help: text(0, 200, { lines: true }).nullish().openapi({ description: "A hint the Secretary may use" }),
  })
  .superRefine(checkOptions)
  .openapi("IntakeFieldInput");

export type IntakeFieldInput = z.output<typeof IntakeFieldInput>;

/** `fields`: 1 to 12 questions, ids unique within the intake, at least one required (docs/intakes.md, Validation). */
export const MAX_FIELDS = 12;

export const IntakeFields = z
  .array(IntakeFieldInput)
  .min(1)
  .max(MAX_FIELDS)
  .superRefine((fields, ctx) => {
    const seen = new Map<string, number>();
    fields.forEach((field, index) => {
      const first = seen.get(field.id);
      if (first === undefined) seen.set(field.id, index);
      else {
        ctx.addIssue({
          code: "custom",
          path: [index, "id"],
          message: `repeats ${JSON.stringify(field.id)}, the id of fields[${first}]; ids must be unique within the intake`,
        });
      }
    });
    if (!fields.some((field) => field.required === true)) {
      ctx.addIssue({ code: "custom", message: 'must include at least one question with "required": true' });
    }
  })
  .openapi({
    description:
      `1 to ${MAX_FIELDS} questions, at least one of them required. The Secretary asks them in this order (the order ` +
      "the owner approves: moving a question switches the intake off), skipping those already answered. The run " +
      "completes in the answers call that leaves every required question answered, with the optional answers sent " +
      "in that call: put optional questions before the last required one if they should always be asked.",
  });
