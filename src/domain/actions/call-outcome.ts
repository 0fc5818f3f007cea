import { eq, sql } from "drizzle-orm";
import { actionCalls, actions } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import type { OutboundOutcome } from "../../lib/outbound";
import type { Action } from "./action-object";
import { fencedAnswer } from "./answer-fence";
import { type ActionCall, toCallObject } from "./call-object";

/** The answer is read up to 16,000 bytes (docs/guides/connected-actions.md, The answer rules). */
export const MAX_ANSWER_BYTES = 16_000;
export const ANSWER_CHARS_FOR_SECRETARY = 4000;

/*
 * How a call ends: the outbound call's result in the words of its history (docs/guides/connected-actions.md, The
 * call history), recorded with the action's
 * counters, and what the Secretary gets back from it.
 */

export type Outcome = {
  status: ActionCall["status"];
  httpStatus: number | null;
  error: string | null;
  answer: string | null;
};

/** Each way a call can end, in its words (docs/guides/connected-actions.md, The answer rules; The call history). */
export function outcomeOf(result: OutboundOutcome, timeoutMs: number): Outcome {
  const failure = (error: string, httpStatus: number | null = null): Outcome => ({
    status: "error",
    httpStatus,
    error,
    answer: null,
  });
  switch (result.kind) {
    case "delivered":
      return { status: "success", httpStatus: result.status, error: null, answer: result.answer };
    case "http_error":
      return failure(`HTTP ${result.status}`, result.status);
    case "redirect":
      return failure(`HTTP ${result.status}: redirects are not followed`, result.status);
    case "too_large":
      return failure(`larger than ${MAX_ANSWER_BYTES} bytes`, result.status);
    case "not_json":
      return failure("did not return JSON", result.status);
    case "timeout":
      return {
        status: "timeout",
        httpStatus: null,
        error: `no answer within ${timeoutMs / 1000} seconds`,
        answer: null,
      };
    case "refused_address":
      return failure(result.reason);
    case "unresolved":
      return failure(`address cannot be fetched: the host name could not be resolved (${result.error})`);
    case "connection_failed":
      return failure(`the connection failed: ${result.error}`);
  }
}

/** Records a finished call and moves the action's counters and timestamps, in one batch. */
export async function recordOutcome(
  deps: Dependencies,
  action: Action,
  call: ActionCall,
  outcome: Outcome,
  durationMs: number,
  now: string,
) {
  const { db } = deps;
  const failed = outcome.status === "error" || outcome.status === "timeout";
  const [[recorded]] = await db.batch([
    db
      .update(actionCalls)
      .set({ status: outcome.status, httpStatus: outcome.httpStatus, error: outcome.error, durationMs })
      .where(eq(actionCalls.id, call.id))
      .returning(),
    db
      .update(actions)
      .set({
        lastCalledAt: now,
        ...(failed ? { lastFailureAt: now, failureCount: sql`${actions.failureCount} + 1` } : { lastSuccessAt: now }),
      })
      .where(eq(actions.id, action.id)),
  ]);
  // The action was deleted meanwhile (its calls with it): the Secretary still gets the outcome.
  return (
    recorded ?? { ...call, status: outcome.status, httpStatus: outcome.httpStatus, error: outcome.error, durationMs }
  );
}

/**
 * What the Secretary gets back: the call record, and the first 4,000 characters of a successful answer, fenced and
 * marked as information from the action (`answer-fence.ts`), as pushed knowledge is.
 */
export function callResult(action: Action, call: ActionCall, answer: string | null) {
  const chars = answer === null ? [] : [...answer];
  return {
    call: toCallObject(call),
    result: answer === null ? null : fencedAnswer(action, chars.slice(0, ANSWER_CHARS_FOR_SECRETARY).join("")),
    truncated: chars.length > ANSWER_CHARS_FOR_SECRETARY,
  };
}
