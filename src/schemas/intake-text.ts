import { z } from "@hono/zod-openapi";
import { characterCount, hiddenCharacterProblem } from "../lib/text";

// The text rules an intake's members share (its name, title and description, and its questions' ids, labels and
// help): identifiers, and text counted in code points (docs/intakes.md, Validation).

/** An intake's `name` and a question's `id`: `a-z 0-9 _`, starting with a letter (docs/intakes.md, Validation). */
export const IDENTIFIER = /^[a-z][a-z0-9_]*$/;
export const IDENTIFIER_RULE = "must be lower-case letters, digits and underscores, starting with a letter";

export const identifier = (min: number, max: number) =>
  z.string().min(min).max(max).regex(IDENTIFIER, { error: IDENTIFIER_RULE });

/**
 * Text of `min` to `max` characters, counted in code points ("é" and "😀" are one each), that
 * is not only white space and hides nothing from the owner who approves it (no invisible or direction-changing
 * character; `lines`: line breaks and tabs allowed; docs/intakes.md). The issues are zod's own
 * `too_small`/`too_big`, so they read like every other length rule.
 */
export const text = (min: number, max: number, { lines }: { lines: boolean }) =>
  z
    .string()
    .superRefine((value, ctx) => {
      const chars = characterCount(value);
      const hidden = hiddenCharacterProblem(value, { lines });
      if (chars < min)
        ctx.addIssue({ code: "too_small", origin: "string", minimum: min, inclusive: true, input: value });
      else if (chars > max) {
        ctx.addIssue({ code: "too_big", origin: "string", maximum: max, inclusive: true, input: value });
      } else if (min > 0 && value.trim() === "")
        ctx.addIssue({ code: "custom", message: "must not be blank", input: value });
      else if (hidden) ctx.addIssue({ code: "custom", message: hidden, input: value });
    })
    .openapi({ minLength: min, maxLength: max });
