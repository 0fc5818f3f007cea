import { z } from "@hono/zod-openapi";
import { text } from "./intake-text";

/**
 * `POST /api/sandbox/businesses`: everything optional, an empty body too (docs/decisions.md, Sandbox businesses). The
 * name is shown in the dashboard and to the Secretary, so it is one line of visible text; the country (ISO 3166-1
 * alpha-2, in either case) picks the shard, the currency and the time zone; DEFAULT_COUNTRY's when left out.
 */
export const DEFAULT_COUNTRY = "NL";

export const SandboxBusinessBody = z.strictObject({
  name: text(2, 80, { lines: false })
    .transform((name) => name.trim())
    .optional(),
  country: z
    .string()
    .regex(/^[A-Za-z]{2}$/, { error: "must be a two-letter ISO 3166-1 country code, such as NL or US" })
    .transform((code) => code.toUpperCase())
    .default(DEFAULT_COUNTRY),
});
export type SandboxBusinessBody = z.output<typeof SandboxBusinessBody>;
