import { createRoute, OpenAPIHono, type RouteConfig } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";
import { rejectInvalid } from "../lib/validation";
import { admittedFirst, partnerCredential } from "../middleware/authenticate-partner";

/**
 * A router of the partner API: its routes are validated by their zod schemas (`hook` says how a failure reads) and
 * documented in the OpenAPI document. A request the schema refuses gets its 400 only once its credential is admitted.
 */
export const createPartnerRouter = (hook: typeof rejectInvalid = rejectInvalid) =>
  new OpenAPIHono<AppEnv>({ defaultHook: admittedFirst(hook) });

/**
 * A partner route (spec: Endpoints, "All need Authorization: Bearer <API_KEY or ACCESS_TOKEN>"), and the document
 * states the bearer requirement. The credential's shape is checked first; its handler admits it (credential, plan,
 * request budget), with its first read through `readAsPartner` or alone through `admitted`, before anything else.
 * Declared per route rather than on `/api/v1/*`, so that a public path under `/api/v1` (the OpenAPI document) keeps
 * its 404 and 405 answers.
 */
export function partnerRoute<const Config extends Omit<RouteConfig, "middleware" | "security">>(config: Config) {
  return createRoute({
    ...config,
    security: [{ bearerAuth: [] }],
    middleware: [partnerCredential] as const,
  });
}

/** The content of a body the route takes or answers: JSON with `schema` (spec, Conventions: JSON for all bodies). */
export const json = <Schema>(schema: Schema) => ({ "application/json": { schema } });
