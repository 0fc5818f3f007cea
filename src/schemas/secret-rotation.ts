import { z } from "@hono/zod-openapi";
import { MAX_PREVIOUS_SECRET_SECONDS } from "../names-and-limits";

const EXPIRES_IN_RULE = `must be a whole number of seconds from 0 to ${MAX_PREVIOUS_SECRET_SECONDS}`;

/**
 * The rotation body, `{ "expires_in": seconds }` (docs/webhooks.md, Rotating a secret). The body may be left out (the
 * default applies); unknown keys are ignored like every body's, and the answer's `Ignored-Members` header names them:
 * a misspelt `expires_in` is seen there (docs/guides/errors.md, Unknown members).
 */
export const RotateSecretBody = z
  .object({
    expires_in: z
      .number({ error: EXPIRES_IN_RULE })
      .int({ error: EXPIRES_IN_RULE })
      .min(0, { error: EXPIRES_IN_RULE })
      .max(MAX_PREVIOUS_SECRET_SECONDS, { error: EXPIRES_IN_RULE })
      .optional()
      .openapi({
        description:
          "How long the previous secret keeps signing beside the new one, in seconds; 0 stops it at once. " +
          "Until then every request carries a signature under each (docs/webhooks.md).",
        default: MAX_PREVIOUS_SECRET_SECONDS,
        example: 3600,
      }),
  })
  .openapi("RotateSecret");

export const RotatedSecret = z
  .object({
    secret: z.string().openapi({
      description: "The new signing secret, shown once: `whsec_` + 32 bytes in standard base64",
      example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw7BjjEVN5eHo=",
    }),
  })
  .openapi("RotatedSecret");
