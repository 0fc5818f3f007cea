import { WorkerEntrypoint } from "cloudflare:workers";
import { database } from "../db/client";
import { callActionByName } from "../domain/action-calls";
import { setPlan } from "../domain/businesses";
import { reportChange } from "../domain/platform-changes";
import type { Env } from "../env";
import { ApiError } from "../lib/errors";
import { parseOrThrow } from "../lib/validation";
import { ActionCallBody, ActionCallParams, BusinessIdParam, PlanChange } from "../schemas/runtime";

/**
 * What an RPC method answers: the value, or the refusal its HTTP mirror would answer (status and sentence). Errors
 * are values here because an exception crossing the RPC boundary keeps only its message.
 */
export type RuntimeResult<T> = { ok: true; value: T } | { ok: false; status: number; error: string };

async function settle<T>(work: () => Promise<T>): Promise<RuntimeResult<T>> {
  try {
    return { ok: true, value: await work() };
  } catch (error) {
    if (error instanceof ApiError) return { ok: false, status: error.status, error: error.message };
    throw error;
  }
}

/**
 * The Secretary runtime API as typed RPC, for Workers bound to this one by a service binding (DESIGN.md). Each
 * method validates its input with the same zod schema as its HTTP mirror under `/internal/v1` and calls the same
 * domain function, so the two cannot drift apart.
 */
export class RuntimeApi extends WorkerEntrypoint<Env> {
  setPlan(businessId: string, change: { plan: string; active: boolean }) {
    return settle(() => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      return setPlan(database(this.env.DB), id, parseOrThrow(PlanChange, change, "json"));
    });
  }

  /** `POST /internal/v1/businesses/{id}/events`: store the snapshot, emit what the change means. */
  reportChange(businessId: string, body: unknown) {
    return settle(() => {
      const { id } = parseOrThrow(BusinessIdParam, { id: businessId }, "param");
      return reportChange(this.env, database(this.env.DB), id, body);
    });
  }

  /** `POST /internal/v1/businesses/{id}/actions/{name}/call`: the Secretary calls a connected action. */
  callAction(businessId: string, name: string, body: unknown) {
    return settle(() => {
      const { id } = parseOrThrow(ActionCallParams, { id: businessId, name }, "param");
      return callActionByName(this.env, database(this.env.DB), id, name, parseOrThrow(ActionCallBody, body, "json"));
    });
  }
}
