import { nothingMore } from "../db/reads";
import { toBusinessObject } from "../domain/access/businesses";
import { readAsPartner } from "../middleware/authenticate-partner";
import { BusinessObject } from "../schemas/business";
import { errorResponses } from "../schemas/errors";
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

// The business is read with the credential, so `GET /me` reads nothing more: one round trip.
export const me = createPartnerRouter().openapi(getMe, async (c) => {
  await readAsPartner(c, () => nothingMore);
  return c.json(toBusinessObject(c.var.principal.business), 200);
});
