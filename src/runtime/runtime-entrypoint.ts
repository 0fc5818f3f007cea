import { WorkerEntrypoint } from "cloudflare:workers";
import { database } from "../db/client";
import { setPlan } from "../domain/businesses";
import type { Env } from "../env";
import { parseOrThrow } from "../lib/validation";
import { BusinessIdParam, PlanChange } from "../schemas/runtime";

/**
 * The Secretary runtime API as typed RPC, for Workers bound to this one by a service binding (DESIGN.md). Each
 * method validates its input with the same zod schema as its HTTP mirror under `/internal/v1` and calls the same
 * domain function, so the two cannot drift apart. A refused input throws an Error whose message is the 400 sentence.
 */
export class RuntimeApi extends WorkerEntrypoint<Env> {
  async setPlan(businessId: string, change: { plan: string; active: boolean }) {
    const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
    return setPlan(database(this.env.DB), id, parseOrThrow(PlanChange, change, "json"));
  }
}
