import { z } from "@hono/zod-openapi";
import { announceBudgets, NO_INPUT, runOperation } from "../admission/partner-admission";
import {
  deleteKnowledgeOperation,
  listKnowledgeOperation,
  putKnowledgeOperation,
} from "../domain/knowledge/knowledge-operations";
import { errorResponses } from "../schemas/error-body";
import { KnowledgeItemObject, KnowledgeKey, PushedKnowledgeObject, PushKnowledgeBody } from "../schemas/knowledge";
import { createPartnerRouter, partnerRoute } from "./partner-router";

const listRoute = partnerRoute({
  method: "get",
  path: "/knowledge",
  operationId: "listKnowledge",
  summary: "List pushed knowledge",
  tags: ["Knowledge"],
  responses: {
    200: {
      description: "The items pushed for this business (without their content)",
      content: { "application/json": { schema: z.object({ data: z.array(KnowledgeItemObject) }) } },
    },
    ...errorResponses(401, 403),
  },
});

const pushed = { "application/json": { schema: PushedKnowledgeObject } };

const putRoute = partnerRoute({
  method: "put",
  path: "/knowledge/{key}",
  operationId: "putKnowledge",
  summary: "Create or replace a knowledge item",
  description:
    "Counts toward 120 pushes per business per clock hour (replacements too). A new key counts as one knowledge source: 3 on Pro, 5 on Business, with the owner's own PDFs and websites.",
  tags: ["Knowledge"],
  request: {
    params: z.object({ key: KnowledgeKey }),
    body: { required: true, content: { "application/json": { schema: PushKnowledgeBody } } },
  },
  responses: {
    200: { description: "Replaced (or unchanged)", content: pushed },
    201: { description: "Created", content: pushed },
    ...errorResponses(400, 401, 403, 413, 429),
  },
});

const deleteRoute = partnerRoute({
  method: "delete",
  path: "/knowledge/{key}",
  operationId: "deleteKnowledge",
  summary: "Remove a knowledge item",
  tags: ["Knowledge"],
  request: { params: z.object({ key: z.string().openapi({ param: { name: "key", in: "path" } }) }) },
  responses: { 204: { description: "Removed" }, ...errorResponses(401, 403, 404) },
});

export const knowledge = createPartnerRouter()
  .openapi(listRoute, (c) => runOperation(c, listKnowledgeOperation, NO_INPUT, (data) => c.json({ data }, 200)))
  .openapi(putRoute, (c) =>
    runOperation(
      c,
      putKnowledgeOperation,
      () => ({ key: c.req.valid("param").key, item: c.req.valid("json") }),
      ({ created, item, budget }) => {
        announceBudgets(c, [budget]);
        return created ? c.json(item, 201) : c.json(item, 200);
      },
    ),
  )
  .openapi(deleteRoute, (c) =>
    runOperation(
      c,
      deleteKnowledgeOperation,
      () => c.req.valid("param").key,
      () => c.body(null, 204),
    ),
  );
