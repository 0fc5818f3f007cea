import type { actionCalls } from "../../db/schema";
import { type EpochMs, iso } from "../../lib/time";

export type ActionCall = typeof actionCalls.$inferSelect;

/**
 * A call still `pending` 30 s after it started was cut off mid-way (the Worker stopped before recording its outcome;
 * an answer takes at most 5 s). From then on it is an `error`, shown as such and no longer among the calls of its
 * customer message (docs/decisions.md, Calls). Nothing is written for it: the queries decide by its age.
 */
export const CUT_OFF_AFTER_MS = 30_000;
export const cutOffBefore = (now: EpochMs) => iso(now - CUT_OFF_AFTER_MS);

/**
 * A call as its record is answered, with one of the four statuses of its history (docs/guides/connected-actions.md, The
 * call history). The queries answer a `pending` call only once it is cut off (see CUT_OFF_AFTER_MS), so a pending call
 * here is an error.
 */
export function toCallObject(call: ActionCall) {
  return {
    id: call.id,
    status: call.status === "pending" ? "error" : call.status,
    arguments: call.arguments,
    http_status: call.httpStatus,
    error: call.status === "pending" ? `cut off: no outcome within ${CUT_OFF_AFTER_MS / 1000} seconds` : call.error,
    duration_ms: call.durationMs,
    created_at: call.createdAt,
  };
}
