import { z } from "zod";
import { PLANS } from "../db/schema";
import { CHANNELS } from "../domain/channels";

/** Inputs of the Secretary runtime API, shared by its HTTP routes and its RPC methods. */
export const BusinessIdParam = z.object({ id: z.uuid({ error: "must be a business id (a UUID)" }) });

export const PlanChange = z.strictObject({ plan: z.enum(PLANS), active: z.boolean() });

/** `POST /internal/v1/businesses/{id}/actions/{name}/call` (DESIGN.md, Secretary runtime API). */
export const ActionCallParams = BusinessIdParam.extend({ name: z.string().min(1).max(64) });

export const ActionCallBody = z.object({
  conversation_id: z.string().min(1).max(200),
  message_id: z.string().min(1).max(200),
  channel: z.enum(CHANNELS),
  arguments: z.record(z.string(), z.unknown()).default({}),
});

export type ActionCallBody = z.infer<typeof ActionCallBody>;
