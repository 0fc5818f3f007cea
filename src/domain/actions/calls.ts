import { and, eq, sql } from "drizzle-orm";
import { insertWithinLimit } from "../../db/insert-within-limit";
import { actionCalls, actions, businesses } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { ApiError, conflict, notFound } from "../../lib/api-error";
import { logLine } from "../../lib/log";
import { signedPost } from "../../lib/outbound";
import { type Clock, iso } from "../../lib/time";
import type { Channel } from "../../names-and-limits";
import type { ActionCallBody } from "../../schemas/runtime";
import { placedHere } from "../access/runtime-shard";
import { actionsRunOn } from "../secretary/channels";
import { signingSecrets } from "../webhooks/secret-rotation";
import { type Action, approvedVersion } from "./action-object";
import { argumentProblem, assertRequiredArguments } from "./arguments";
import { cutOffBefore } from "./call-object";
import { callResult, MAX_ANSWER_BYTES, outcomeOf, recordOutcome } from "./call-outcome";
import { callTool, type ToolCall } from "./mcp-calls";

/** An action answers within 5 s, 2 calls a customer message (docs/guides/connected-actions.md, The answer rules). */
export const ACTION_TIMEOUT_MS = 5000;
export const CALLS_PER_MESSAGE = 2;

export type CallRequest = {
  conversationId: string;
  messageId: string;
  channel: Channel | "dashboard_test";
  arguments: Record<string, unknown>;
};

/**
 * `ownerTest`: the owner's Test button (the action may be off). `answerTimeoutMs`: 5 s unless a test
 * shortens it. `now`: the clock, which tests drive instead of waiting (the previous secret of a rotation signs until
 * it expires).
 */
type CallOptions = { ownerTest?: boolean; answerTimeoutMs?: number; now?: Clock };

/**
 * One call of an action (`POST /internal/v1/businesses/{id}/actions/{name}/call`; docs/decisions.md, Calls), as steps:
 * the action must be enabled (the owner's Test may call it while off) and the channel one where actions run → every
 * required argument must be there (else 422: no call at all) → the arguments must fit the schema (else recorded
 * `rejected`, nothing sent) → a place among the 2 calls of the customer message, taken atomically with the call's
 * record → the signed POST → the outcome recorded with the counters.
 */
export async function callAction(
  deps: Dependencies,
  action: Action,
  business: { id: string; handle: string },
  request: CallRequest,
  options: CallOptions = {},
) {
  const { db } = deps;
  if (!options.ownerTest) {
    if (!action.enabled)
      throw conflict("The action is switched off: only the owner can switch it on.", "invalid_state");
    if (request.channel === "dashboard_test" || !actionsRunOn(request.channel)) {
      throw conflict("Connected actions do not run on phone calls.", "invalid_state");
    }
  }
  // The Secretary's calls are checked against the parameters the owner approved; the owner's Test, against the
  // current ones, which are what the owner reviews (docs/decisions.md, Changes to a switched-on action).
  const { parameters } = options.ownerTest ? { parameters: action.parameters } : approvedVersion(action);
  assertRequiredArguments(parameters, request.arguments);
  const now = options.now ?? Date.now;
  const startedAt = now();
  const base = {
    actionId: action.id,
    businessId: business.id,
    conversationId: request.conversationId,
    messageId: request.messageId,
    channel: request.channel,
    arguments: request.arguments,
    createdAt: iso(startedAt),
  };
  const rejection = argumentProblem(parameters, request.arguments);
  if (rejection) {
    const [call] = await db
      .insert(actionCalls)
      .values({
        ...base,
        status: "rejected",
        error: `The arguments do not fit the parameters: ${rejection}.`,
        durationMs: 0,
      })
      .returning();
    if (!call) throw new Error("the rejected call was not recorded");
    return callResult(action, call, null);
  }
  // At most 2 calls a customer message (docs/guides/connected-actions.md, The answer rules). Rejected calls sent
  // nothing and do not count, nor do calls cut off mid-way (still pending after 30 s: the service failed, not the
  // customer's message); the owner's Test belongs to no customer message.
  const callsOfMessage = sql`(select count(*) from ${actionCalls} where ${actionCalls.businessId} = ${business.id} and ${actionCalls.messageId} = ${request.messageId} and ${actionCalls.status} <> 'rejected' and not (${actionCalls.status} = 'pending' and ${actionCalls.createdAt} < ${cutOffBefore(startedAt)}))`;
  const pending = { ...base, status: "pending" as const };
  const call = options.ownerTest
    ? (await db.insert(actionCalls).values(pending).returning())[0]
    : await insertWithinLimit(db, actionCalls, pending, CALLS_PER_MESSAGE, callsOfMessage);
  if (!call) {
    throw new ApiError(
      "action_calls_exhausted",
      `At most ${CALLS_PER_MESSAGE} action calls are made for one customer message.`,
    );
  }
  const sent: ToolCall = {
    id: call.id,
    createdAt: call.createdAt,
    arguments: request.arguments,
    business: { id: business.id, handle: business.handle },
    conversation: { id: request.conversationId, channel: request.channel },
  };
  const timeoutMs = options.answerTimeoutMs ?? ACTION_TIMEOUT_MS;
  const outcome =
    action.mcpServerId === null
      ? await postCall(deps, action, sent, timeoutMs, now)
      : await callTool(deps, action, sent, timeoutMs, now);
  const finishedAt = now();
  // One line per call sent, of ids and statuses, never its URL, arguments or answer: nothing a partner or customer
  // wrote reaches a log (docs/operations.md, Reading the logs).
  logLine("action_call", {
    callId: call.id,
    actionId: action.id,
    status: outcome.status,
    httpStatus: outcome.httpStatus,
    durationMs: finishedAt - startedAt,
  });
  return callResult(
    action,
    await recordOutcome(deps, action, call, outcome, finishedAt - startedAt, iso(finishedAt)),
    outcome.answer,
  );
}

/** The signed POST of a call to the action's own url (docs/webhooks.md, Action calls). */
async function postCall(deps: Dependencies, action: Action, call: ToolCall, timeoutMs: number, now: Clock) {
  const body = JSON.stringify({
    call_id: call.id,
    action: action.name,
    arguments: call.arguments,
    business: call.business,
    conversation: call.conversation,
    created_at: call.createdAt,
  });
  const signedAt = now();
  const result = await signedPost(deps.outbound, {
    kind: "Actions",
    url: action.url,
    body,
    headers: { "X-Service-Call": String(call.id) },
    // An action call's `webhook-id` is its call id, so that Standard Webhooks libraries verify it as they verify a
    // delivery (docs/webhooks.md, Action calls).
    webhookId: String(call.id),
    // During a rotation, the action's previous secret signs too, until it expires.
    secrets: signingSecrets(action, signedAt),
    unixSeconds: Math.floor(signedAt / 1000),
    timeoutMs,
    readAnswerBytes: MAX_ANSWER_BYTES,
  });
  return outcomeOf(result, timeoutMs);
}

/** The runtime's call by action name: the business (checked where it was found: `placedHere`) and the action found in one query. */
export async function callActionByName(
  deps: Dependencies,
  businessId: string,
  name: string,
  body: ActionCallBody,
  options: CallOptions = {},
) {
  const row = await deps.db
    .select({
      business: { id: businesses.id, handle: businesses.handle, movingSince: businesses.movingSince },
      action: actions,
    })
    .from(businesses)
    .leftJoin(actions, and(eq(actions.businessId, businesses.id), eq(actions.name, name)))
    .where(eq(businesses.id, businessId))
    .get();
  const business = placedHere(row?.business);
  if (!row?.action) throw notFound(`The business has no action named "${name}".`);
  const request = {
    conversationId: body.conversation_id,
    messageId: body.message_id,
    channel: body.channel,
    arguments: body.arguments,
  };
  return callAction(deps, row.action, business, request, options);
}

/**
 * The owner's Test button (docs/guides/connected-actions.md, Switched on by the owner): a real call with sample
 * arguments, recorded. `action`
 * is the row the caller read within the business (`findAction`), which also built the form of those arguments.
 */
export async function testAction(
  deps: Dependencies,
  business: { id: string; handle: string },
  action: Action,
  sampleArguments: Record<string, unknown>,
) {
  const request: CallRequest = {
    conversationId: "owner-test",
    messageId: `owner-test-${crypto.randomUUID()}`,
    channel: "dashboard_test",
    arguments: sampleArguments,
  };
  return callAction(deps, action, business, request, { ownerTest: true });
}
