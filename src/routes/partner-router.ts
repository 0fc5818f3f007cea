import { createRoute, OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";
import { rejectInvalid } from "../lib/validation";
import { requirePartner } from "../middleware/authenticate-partner";
import { limitPrincipalRate } from "../middleware/principal-rate-limit";

/** A router of the partner API: its routes are validated by their zod schemas and documented in the OpenAPI document. */
export const createPartnerRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: rejectInvalid });

/**
 * A partner route (spec: Endpoints, "All need Authorization: Bearer <API_KEY or ACCESS_TOKEN>"): authentication,
 * the plan rule and the request budget run before validation, and the document states the bearer requirement.
 * Declared per route rather than on `/api/v1/*`, so that a public path under `/api/v1` (the OpenAPI document) keeps
 * its 404 and 405 answers.
 */
export function partnerRoute<const Config extends Omit<RouteConfig, "middleware" | "security">>(config: Config) {
  return createRoute({
    ...config,
    security: [{ bearerAuth: [] }],
    middleware: [requirePartner, limitPrincipalRate] as const,
  });
}
