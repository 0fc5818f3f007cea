import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { runOperation } from "../admission/partner-admission";
import type { Principal } from "../domain/access/principals";
import {
  assertSandboxKey,
  callSandboxActionOperation,
  emitSandboxEventOperation,
  runSandboxIntakeOperation,
} from "../domain/sandbox/sandbox-operations";
import { pathId, rejectInvalid } from "../lib/validation";
import { ErrorBody, errorResponses } from "../schemas/error-body";
import {
  SandboxActionCall,
  SandboxActionCallBody,
  SandboxConversation,
  SandboxConversationBody,
  SandboxEventBody,
  SandboxEvents,
} from "../schemas/sandbox-operations";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

/*
 * `/api/v1/sandbox`: what a test key of a sandbox business can cause (docs/decisions.md, Sandbox operations;
 * docs/guides/sandbox.md). Any other credential is refused with 403 `forbidden` by the operations themselves
 * (src/domain/sandbox/sandbox-operations.ts), and before a body's own 400 by this router's validation hook.
 */

const ONLY = "Only with a test key (sk_test_…) of a sandbox business; any other credential gets 403 `forbidden`.";
const byId = { params: z.object({ id: pathId }) };

const refused = {
  403: {
    description: "Not a test key of a sandbox business (`forbidden`), or the plan does not include the API",
    content: json(ErrorBody),
  },
};
const switchedOff = (what: string) => ({
  409: {
    description: `The ${what} is switched off: its owner switches it on in the dashboard`,
    content: json(ErrorBody),
  },
});

const eventsRoute = partnerRoute({
  method: "post",
  path: "/sandbox/events",
  operationId: "emitSandboxEvent",
  summary: "Cause an event on a sandbox business",
  description: `Causes the event as the core platform would: a new booking or order, a change of an upcoming booking or an open order (one is made first when none fits), a payment, a lead, a review. The booking or order reads as the event carried it. intake.completed, action.*, intake.enabled and intake.disabled and ping are caused otherwise: the 400 says how. ${ONLY}`,
  tags: ["Sandbox"],
  request: { body: { required: true, content: json(SandboxEventBody) } },
  responses: {
    201: { description: "The events emitted and delivered", content: json(SandboxEvents) },
    ...errorResponses(400, 401),
    ...refused,
  },
});

const conversationRoute = partnerRoute({
  method: "post",
  path: "/sandbox/intakes/{id}/conversations",
  operationId: "runSandboxConversation",
  summary: "Run a customer's intake conversation on a sandbox business",
  description: `Runs the intake as the Secretary does with a customer who gives these answers: the response is stored and intake.completed delivered. The intake must be this credential's and switched on by the owner (409 otherwise). An answer the intake refuses, or a required question left out, is a 400 naming it (\`answers.<id>\`) and nothing is stored. ${ONLY}`,
  tags: ["Sandbox"],
  request: { ...byId, body: { required: true, content: json(SandboxConversationBody) } },
  responses: {
    201: { description: "The response, as stored and delivered", content: json(SandboxConversation) },
    ...errorResponses(400, 401, 404),
    ...refused,
    ...switchedOff("intake"),
  },
});

const callRoute = partnerRoute({
  method: "post",
  path: "/sandbox/actions/{id}/calls",
  operationId: "callSandboxAction",
  summary: "Make the Secretary's call of an action on a sandbox business",
  description: `Calls the action as the Secretary does in a chat: signed, recorded in its calls, with the answer as the Secretary gets it. The action must be this credential's side's and switched on by the owner (409 otherwise). ${ONLY}`,
  tags: ["Sandbox"],
  request: { ...byId, body: { required: true, content: json(SandboxActionCallBody) } },
  responses: {
    200: { description: "The call's record and the answer", content: json(SandboxActionCall) },
    ...errorResponses(400, 401, 404),
    ...refused,
    ...switchedOff("action"),
  },
});

/** A refused body is answered only once the credential may use the sandbox at all. */
const sandboxFirst: typeof rejectInvalid = (result, c: Context) => {
  if (!result.success) assertSandboxKey(c.get("principal") as Principal);
  return rejectInvalid(result, c);
};

export const sandbox = createPartnerRouter(sandboxFirst)
  .openapi(eventsRoute, (c) =>
    runOperation(
      c,
      emitSandboxEventOperation,
      () => c.req.valid("json"),
      (events) => c.json({ events }, 201),
    ),
  )
  .openapi(conversationRoute, (c) =>
    runOperation(
      c,
      runSandboxIntakeOperation(c.env),
      () => ({ id: c.req.param("id"), ...c.req.valid("json") }),
      (response) => c.json(response, 201),
    ),
  )
  .openapi(callRoute, (c) =>
    runOperation(
      c,
      callSandboxActionOperation,
      () => ({ id: c.req.param("id"), ...c.req.valid("json") }),
      (call) => c.json(call, 200),
    ),
  );
