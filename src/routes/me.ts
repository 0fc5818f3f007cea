import { toBusinessObject } from "../domain/access/businesses";
import { getBusinessOperation } from "../domain/access/partner-api";
import { BusinessObject } from "../schemas/business";
import { errorResponses } from "../schemas/errors";
import { NO_INPUT, runOperation } from "./operation-runner";
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
