import { z } from "@hono/zod-openapi";
import { text } from "./intake-text";

/**
 * `POST /api/sandbox/businesses`: everything optional, an empty body too; other keys are ignored, and named in the
 * `Ignored-Members` header (docs/decisions.md, Sandbox businesses). The name is shown in the dashboard and to the Secretary, so it is one line of visible text; the country (ISO 3166-1
 * alpha-2, in either case) picks the shard, the currency and the time zone; DEFAULT_COUNTRY's when left out.
 */
export const DEFAULT_COUNTRY = "NL";

export const SandboxBusinessBody = z
  .object({
    name: text(2, 80, { lines: false })
      .transform((name) => name.trim())
      .optional(),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, { error: "must be a two-letter ISO 3166-1 country code, such as NL or US" })
      .transform((code) => code.toUpperCase())
      .default(DEFAULT_COUNTRY),
  })
  .openapi("CreateSandboxBusiness");
export type SandboxBusinessBody = z.output<typeof SandboxBusinessBody>;

/** Its 201: the test key and the owner's password, shown this once. */
export const CreatedSandboxBusiness = z
  .object({
    business_id: z.uuid(),
    api_key: z.string().openapi({ description: "The business's test key (sk_test_…), shown only here" }),
    owner_email: z.string().openapi({ description: "The dashboard's sign-in of the business's owner" }),
    owner_password: z.string().openapi({ description: "Its password, shown only here" }),
    shard: z.string().openapi({ description: "The database that holds the business" }),
    dashboard_url: z.url(),
  })
  .openapi("CreatedSandboxBusiness");
