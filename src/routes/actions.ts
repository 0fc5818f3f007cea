import { z } from "@hono/zod-openapi";
import { NO_INPUT, runOperation } from "../admission/partner-admission";
import {
  createActionOperation,
  deleteActionOperation,
  getActionOperation,
  listActionsOperation,
  updateActionOperation,
} from "../domain/actions/action-operations";
import { actionNotFound } from "../domain/actions/reads";
import { idOrNotFound, pathId } from "../lib/validation";
import {
  ActionObject,
  ActionWithCallsObject,
  CreateActionBody,
  CreatedActionObject,
  PatchActionBody,
} from "../schemas/actions";
import { ErrorBody, errorResponses } from "../schemas/error-body";
import { createPartnerRouter, json, partnerRoute } from "./partner-router";

/**
 * The path id as the domain takes it, or the action's 404, as for an id out of reach (docs/errors.md, Which answers
 * carry which).
 */
const actionId = (text: string) => idOrNotFound(text, actionNotFound);

const byId = { params: z.object({ id: pathId }) };

const listRoute = partnerRoute({
  method: "get",
  path: "/actions",
  operationId: "listActions",
  summary: "List actions",
  tags: ["Connected actions"],
  responses: {
    200: { description: "The business's actions", content: json(z.object({ data: z.array(ActionObject) })) },
    ...errorResponses(401, 403),
  },
});

const createRoute = partnerRoute({
  method: "post",
  path: "/actions",
  operationId: "createAction",
  summary: "Register an action",
  description: "Starts switched off: only the business owner switches it on. At most 10 per business.",
  tags: ["Connected actions"],
  request: { body: { required: true, content: json(CreateActionBody) } },
  responses: {
    201: { description: "The action, with its signing secret (shown once)", content: json(CreatedActionObject) },
    ...errorResponses(400, 401, 403),
  },
});

const getRoute = partnerRoute({
  method: "get",
  path: "/actions/{id}",
  operationId: "getAction",
  summary: "One action with its 10 most recent calls",
  tags: ["Connected actions"],
  request: byId,
  responses: {
    200: { description: "The action and its recent calls", content: json(ActionWithCallsObject) },
    ...errorResponses(401, 403, 404),
  },
});

const patchRoute = partnerRoute({
  method: "patch",
  path: "/actions/{id}",
  operationId: "updateAction",
  summary: "Change an action",
  description:
    "A new url switches the action off until the owner switches it on again. A new description or parameters of an action that is on are stored, and the action stays on, but the Secretary keeps the version the owner approved until the owner accepts the change (`changePending` meanwhile; `action.change_accepted` then). A new title alone needs no review.",
  tags: ["Connected actions"],
  request: { ...byId, body: { required: true, content: json(PatchActionBody) } },
  responses: {
    200: { description: "The action as it now is", content: json(ActionObject) },
    ...errorResponses(400, 401, 403, 404),
    409: {
      description:
        "Another change of this action landed at the same moment, three times over; send the change again. Or the action is a tool of an MCP server, which defines it: change the tool and refresh the server",
      content: json(ErrorBody),
    },
  },
});

const deleteRoute = partnerRoute({
  method: "delete",
  path: "/actions/{id}",
  operationId: "deleteAction",
  summary: "Remove an action",
  tags: ["Connected actions"],
  request: byId,
  responses: { 204: { description: "Removed, with its call history" }, ...errorResponses(401, 403, 404) },
});

export const actions = createPartnerRouter()
  .openapi(listRoute, (c) => runOperation(c, listActionsOperation, NO_INPUT, (data) => c.json({ data }, 200)))
  .openapi(createRoute, (c) =>
    runOperation(
      c,
      createActionOperation,
      () => c.req.valid("json"),
      (action) => c.json(action, 201),
    ),
  )
  .openapi(getRoute, (c) =>
    runOperation(
      c,
      getActionOperation,
      () => actionId(c.req.valid("param").id),
      (action) => c.json(action, 200),
    ),
  )
  .openapi(patchRoute, (c) =>
    runOperation(
      c,
      updateActionOperation,
      () => ({ id: actionId(c.req.valid("param").id), changes: c.req.valid("json") }),
      (action) => c.json(action, 200),
    ),
  )
  .openapi(deleteRoute, (c) =>
    runOperation(
      c,
      deleteActionOperation,
      () => actionId(c.req.valid("param").id),
      () => c.body(null, 204),
    ),
  );
