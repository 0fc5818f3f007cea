import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "../app-env";
import { rejectInvalid } from "../lib/validation";

/** A router of the partner API: its routes are validated by their zod schemas and documented in the OpenAPI document. */
export const createPartnerRouter = () => new OpenAPIHono<AppEnv>({ defaultHook: rejectInvalid });

/** Every `/api/v1` route needs the bearer credential (spec: Endpoints, "All need Authorization: Bearer"). */
export const bearerAuth = [{ bearerAuth: [] }];
