import { toBusinessObject } from "../domain/access/businesses";
import { BusinessObject } from "../schemas/business";
import { errorResponses } from "../schemas/errors";
import { createPartnerRouter, partnerRoute } from "./partner-router";

const getMe = partnerRoute({
  method: "get",
  path: "/me",
  summary: "The business of the credential",
  tags: ["Business"],
  responses: {
    200: { description: "The business", content: { "application/json": { schema: BusinessObject } } },
    ...errorResponses(401, 403),
  },
});

// The business was read with the credential, so `GET /me` costs no further query.
export const me = createPartnerRouter().openapi(getMe, (c) => c.json(toBusinessObject(c.var.principal.business), 200));
