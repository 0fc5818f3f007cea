import { z } from "@hono/zod-openapi";
import { database } from "../db/client";
import { deleteKnowledge, listKnowledge, pushKnowledge, storedItem } from "../domain/knowledge/items";
import { rateLimitHeaders } from "../lib/errors";
import { admitted, readAsPartner } from "../middleware/authenticate-partner";
import { errorResponses } from "../schemas/errors";
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
  .openapi(listRoute, async (c) => {
    const data = await readAsPartner(c, listKnowledge);
    return c.json({ data }, 200);
  })
  .openapi(putRoute, async (c) => {
    const { key } = c.req.valid("param");
    const existing = await readAsPartner(c, (scope) => storedItem(scope, key));
    const result = await pushKnowledge(
      c.env.BUSINESS_LIMITS,
      database(c.env.DB),
      c.var.principal,
      key,
      c.req.valid("json"),
      existing,
    );
    for (const [name, value] of Object.entries(rateLimitHeaders(result.budget))) c.header(name, value);
    return result.created ? c.json(result.item, 201) : c.json(result.item, 200);
  })
  .openapi(deleteRoute, async (c) => {
    const { business } = await admitted(c);
    await deleteKnowledge(database(c.env.DB), business.id, c.req.valid("param").key);
    return c.body(null, 204);
  });
