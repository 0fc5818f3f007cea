import { z } from "@hono/zod-openapi";
import { NO_INPUT, runOperation } from "../admission/partner-admission";
import {
  createIntakeOperation,
  deleteIntakeOperation,
  getIntakeOperation,
  listIntakeResponsesOperation,
  listIntakesOperation,
  updateIntakeOperation,
} from "../domain/intakes/intake-operations";
import { intakeNotFound, MAX_INTAKES_PER_BUSINESS } from "../domain/intakes/registration";
import { RESPONSES_PER_PAGE } from "../domain/intakes/responses";
import { idOrNotFound, pathId, rejectInvalidNamingField } from "../lib/validation";
import { respondToIntakeError } from "../middleware/error-responses";
import { errorResponses } from "../schemas/error-body";
import { CreateIntakeBody, PatchIntakeBody } from "../schemas/intake-bodies";
import { ResponsesPage, ResponsesQuery } from "../schemas/intake-responses";
import { IntakeObject } from "../schemas/intakes";
import { createPartnerRouter, partnerRoute } from "./partner-router";

/** The path id as the domain takes it, or the intake's 404. */
const intakeId = (text: string) => idOrNotFound(text, intakeNotFound);

const intake = { "application/json": { schema: IntakeObject } };
const params = z.object({ id: pathId });

const listRoute = partnerRoute({
  method: "get",
  path: "/intakes",
  operationId: "listIntakes",
  summary: "List this credential's intakes",
  description: "Only the intakes registered by the calling key or app: intakes are never shared.",
  tags: ["Intakes"],
  responses: {
    200: {
      description: "The caller's intakes, oldest first",
      content: { "application/json": { schema: z.object({ data: z.array(IntakeObject) }) } },
    },
    ...errorResponses(401, 403),
  },
});

const createRoute = partnerRoute({
  method: "post",
  path: "/intakes",
  operationId: "createIntake",
  summary: "Register an intake",
  description: `Starts switched off: only the business owner switches it on. A business can have up to ${MAX_INTAKES_PER_BUSINESS} intakes, counted across every key and app together (403 beyond). Invalid input is a 400 whose \`field\` names the member, e.g. \`fields[1].options\`.`,
  tags: ["Intakes"],
  request: { body: { required: true, content: { "application/json": { schema: CreateIntakeBody } } } },
  responses: { 201: { description: "Registered, enabled false", content: intake }, ...errorResponses(400, 401, 403) },
});

const getRoute = partnerRoute({
  method: "get",
  path: "/intakes/{id}",
  operationId: "getIntake",
  summary: "One intake",
  tags: ["Intakes"],
  request: { params },
  responses: { 200: { description: "The intake", content: intake }, ...errorResponses(401, 403, 404) },
});

const patchRoute = partnerRoute({
  method: "patch",
  path: "/intakes/{id}",
  operationId: "updateIntake",
  summary: "Change an intake",
  description:
    "Accepts title, description and fields (the whole list); a key left out keeps its value. name and enabled may be sent back unchanged. A real change switches the intake off until the owner approves it again; sending the same values back changes nothing.",
  tags: ["Intakes"],
  request: { params, body: { required: true, content: { "application/json": { schema: PatchIntakeBody } } } },
  responses: {
    200: { description: "The intake as stored", content: intake },
    ...errorResponses(400, 401, 403, 404, 409),
  },
});

const deleteRoute = partnerRoute({
  method: "delete",
  path: "/intakes/{id}",
  operationId: "deleteIntake",
  summary: "Remove an intake and its responses",
  tags: ["Intakes"],
  request: { params },
  responses: { 204: { description: "Removed, with its stored responses" }, ...errorResponses(401, 403, 404) },
});

const responsesRoute = partnerRoute({
  method: "get",
  path: "/intakes/{id}/responses",
  operationId: "listIntakeResponses",
  summary: "Responses, newest first",
  description: `${RESPONSES_PER_PAGE} a page. Pass next_before as before for the next page; it is null on the last page.`,
  tags: ["Intakes"],
  request: { params, query: ResponsesQuery },
  responses: {
    200: { description: "A page of responses", content: { "application/json": { schema: ResponsesPage } } },
    ...errorResponses(400, 401, 403, 404),
  },
});

/**
 * Intakes: validation failures name the member (`field`), and every other 400 of these routes carries `field` too,
 * null for the body as a whole (docs/guides/intakes.md, Registering an intake).
 */
export const intakes = createPartnerRouter(rejectInvalidNamingField)
  .openapi(listRoute, (c) => runOperation(c, listIntakesOperation, NO_INPUT, (data) => c.json({ data }, 200)))
  .openapi(createRoute, (c) =>
    runOperation(
      c,
      createIntakeOperation,
      () => c.req.valid("json"),
      (intake) => c.json(intake, 201),
    ),
  )
  .openapi(getRoute, (c) =>
    runOperation(
      c,
      getIntakeOperation,
      () => intakeId(c.req.valid("param").id),
      (intake) => c.json(intake, 200),
    ),
  )
  .openapi(patchRoute, (c) =>
    runOperation(
      c,
      updateIntakeOperation,
      () => ({ id: intakeId(c.req.valid("param").id), changes: c.req.valid("json") }),
      (intake) => c.json(intake, 200),
    ),
  )
  .openapi(deleteRoute, (c) =>
    runOperation(
      c,
      deleteIntakeOperation,
      () => intakeId(c.req.valid("param").id),
      () => c.body(null, 204),
    ),
  )
  .openapi(responsesRoute, (c) =>
    runOperation(
      c,
      listIntakeResponsesOperation,
      () => ({ id: intakeId(c.req.valid("param").id), before: c.req.valid("query").before }),
      (page) => c.json(page, 200),
    ),
  )
  .onError(respondToIntakeError);
