import { actions } from "./actions";
import { appointments } from "./appointments";
import { intakes } from "./intakes";
import { knowledge } from "./knowledge";
import { me } from "./me";
import { orders } from "./orders";
import { createPartnerRouter } from "./partner-router";
import { webhooks } from "./webhooks";

/** Everything under `/api/v1` that a partner calls. Later resources mount here the same way. */
export const partnerApi = createPartnerRouter();
partnerApi
  .route("/", me)
  .route("/", appointments)
  .route("/", orders)
  .route("/", webhooks)
  .route("/", knowledge)
  .route("/", intakes)
  .route("/", actions);

partnerApi.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
  type: "http",
  scheme: "bearer",
  description: "An API key (`sk_live_...`) or an OAuth access token",
});
