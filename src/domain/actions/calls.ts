import { eq } from "drizzle-orm";
import { actionCalls } from "../../db/schema";
import { runStatements } from "../../db/statements";
import type { Dependencies } from "../../dependencies";
import { conflict, notFound } from "../../lib/api-error";
import { logLine } from "../../lib/log";
import { signedPost } from "../../lib/outbound";
import { type Clock, iso } from "../../lib/time";
import type { ActionCallBody } from "../../schemas/runtime";
import { placedHere } from "../access/runtime-shard";
import { actionsRunOn } from "../secretary/channels";
import { signingSecrets } from "../webhooks/secret-rotation";
import { type Action, approvedVersion } from "./action-object";
import { argumentProblem, assertRequiredArguments } from "./arguments";
import type { ActionCall } from "./call-object";
import { callResult, MAX_ANSWER_BYTES, outcomeOf, recordOutcome } from "./call-outcome";
import {
  type CallRequest,
  callRow,
  callsExhausted,
  readAndReserve,
  recordRejected,
  reservation,
} from "./call-reservation";
import { callTool, type ToolCall } from "./mcp-calls";

/** An action answers within 5 s (docs/guides/connected-actions.md, The answer rules). */
export const ACTION_TIMEOUT_MS = 5000;

/**
 * `ownerTest`: the owner's Test button (the action may be off). `answerTimeoutMs`: 5 s unless a test
 * shortens it. `now`: the clock, which tests drive instead of waiting (the previous secret of a rotation signs until
 * it expires).
 */
type CallOptions = { ownerTest?: boolean; answerTimeoutMs?: number; now?: Clock };

/** The action must be on (the owner's Test may call it while off), the channel one where actions run. */
function assertCallable(action: Action, request: CallRequest, options: CallOptions) {
  if (options.ownerTest) return;
  if (!action.enabled) throw conflict("The action is switched off: only the owner can switch it on.", "invalid_state");
  if (!runsOn(request.channel)) throw conflict("Connected actions do not run on phone calls.", "invalid_state");
}

const runsOn = (channel: CallRequest["channel"]) => channel !== "dashboard_test" && actionsRunOn(channel);

/**
 * The Secretary's calls are checked against the parameters the owner approved; the owner's Test, against the current
 * ones, which are what the owner reviews (docs/decisions.md, Changes to a switched-on action).
 */
const parametersOf = (action: Action, options: CallOptions) =>
  options.ownerTest ? action.parameters : approvedVersion(action).parameters;

/**
 * One call of an action (docs/decisions.md, Calls), as steps: the action must be enabled (the owner's Test may call it
 * while off) and the channel one where actions run → every required argument must be there (else 422: no call at
 * all) → the arguments must fit the schema (else recorded `rejected`, nothing sent) → a place among the 2 calls of the
 * customer message, taken atomically with the call's record → the signed POST → the outcome recorded with the
 * counters. The runtime's call by name (`callActionByName`) takes the same steps with its first three in one round
 * trip.
 */
export async function callAction(
  deps: Dependencies,
  action: Action,
  business: { id: string; handle: string },
  request: CallRequest,
  options: CallOptions = {},
) {
  const { db } = deps;
  assertCallable(action, request, options);
  const parameters = parametersOf(action, options);
  assertRequiredArguments(parameters, request.arguments);
  const startedAt = (options.now ?? Date.now)();
  const rejection = argumentProblem(parameters, request.arguments);
  if (rejection) return recordRejected(deps, action, business, request, rejection, startedAt);
  const [call] = options.ownerTest
    ? await db
        .insert(actionCalls)
        .values({ ...callRow(action, business, request, startedAt), status: "pending" })
        .returning()
    : ((await runStatements(db, [reservation(business.id, action.name, request, startedAt)]))[0] as ActionCall[]);
  if (!call) throw callsExhausted();
  return sendAndRecord(deps, action, business, request, call, options, startedAt);
}

/** A call with its place: the signed POST (or the MCP tool's call), then the outcome recorded with the counters. */
async function sendAndRecord(
  deps: Dependencies,
  action: Action,
  business: { id: string; handle: string },
  request: CallRequest,
  call: ActionCall,
  options: CallOptions,
  startedAt: number,
) {
  const now = options.now ?? Date.now;
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

/**
 * The runtime's call by action name (`POST /internal/v1/businesses/{id}/actions/{name}/call`): the business (checked
 * where it was found: `placedHere`), the action and the call's place among its message's 2 in ONE round trip
 * (call-reservation.ts), then the send and the record: two in all. A reservation whose arguments then fail is removed
 * (a 422) or becomes the rejected call.
 */
export async function callActionByName(
  deps: Dependencies,
  businessId: string,
  name: string,
  body: ActionCallBody,
  options: CallOptions = {},
) {
  const request: CallRequest = {
    conversationId: body.conversation_id,
    messageId: body.message_id,
    channel: body.channel,
    arguments: body.arguments,
  };
  const startedAt = (options.now ?? Date.now)();
  const found = await readAndReserve(deps, businessId, name, request, startedAt, runsOn(request.channel));
  const business = placedHere(found.business);
  const { action, reserved } = found;
  if (!action) throw notFound(`The business has no action named "${name}".`);
  assertCallable(action, request, options);
  const parameters = parametersOf(action, options);
  try {
    assertRequiredArguments(parameters, request.arguments);
  } catch (error) {
    if (reserved) await deps.db.delete(actionCalls).where(eq(actionCalls.id, reserved.id));
    throw error;
  }
  const rejection = argumentProblem(parameters, request.arguments);
  if (rejection) return recordRejected(deps, action, business, request, rejection, startedAt, reserved);
  if (!reserved) throw callsExhausted();
  return sendAndRecord(deps, action, business, request, reserved, options, startedAt);
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
