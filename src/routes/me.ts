import { NO_INPUT, runOperation } from "../admission/partner-admission";
import { getBusinessOperation } from "../domain/access/business-operations";
import { toBusinessObject } from "../domain/access/businesses";
import { BusinessObject } from "../schemas/business";
import { errorResponses } from "../schemas/error-body";
import { createPartnerRouter, partnerRoute } from "./partner-router";

const getMe = partnerRoute({
  method: "get",
  path: "/me",
  operationId: "getMe",
  summary: "The business of the credential",
  tags: ["Business"],
  responses: {
    200: { description: "The business", content: { "application/json": { schema: BusinessObject } } },
    ...errorResponses(401, 403),
  },
});

export const me = createPartnerRouter().openapi(getMe, (c) =>
  runOperation(c, getBusinessOperation, NO_INPUT, (_, principal) => c.json(toBusinessObject(principal.business), 200)),
);
