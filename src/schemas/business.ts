import { z } from "@hono/zod-openapi";

/** The business of `GET /me` (docs/guides/getting-started.md, The first call). */
export const BusinessObject = z
  .object({
    id: z.string().openapi({ format: "uuid" }),
    handle: z.string().openapi({ description: "Last part of the booking link", example: "bella-hair" }),
    name: z.string().openapi({ example: "Bella Hair Studio" }),
    currency: z
      .string()
      .openapi({ description: "ISO 4217 code for every amount the business returns", example: "EUR" }),
    country: z.string().openapi({ description: "ISO 3166-1 alpha-2", example: "NL" }),
    sandbox: z
      .literal(true)
      .optional()
      .openapi({ description: "Present, and true, on a sandbox business only (the guide: /docs/guides/sandbox)" }),
  })
  .openapi("Business");

export type BusinessObject = z.infer<typeof BusinessObject>;
