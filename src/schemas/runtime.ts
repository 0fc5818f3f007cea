import { z } from "zod";
import { PLANS } from "../db/schema";

/** Inputs of the Secretary runtime API, shared by its HTTP routes and its RPC methods. */
export const BusinessIdParam = z.object({ id: z.uuid({ error: "must be a business id (a UUID)" }) });

export const PlanChange = z.strictObject({ plan: z.enum(PLANS), active: z.boolean() });
