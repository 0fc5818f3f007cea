import { requirePartner } from "../middleware/authenticate-partner";
import { appointments } from "./appointments";
import { me } from "./me";
import { orders } from "./orders";
import { createPartnerRouter } from "./partner-router";

/** Everything under `/api/v1` that needs a partner credential. Later resources mount here the same way. */
export const partnerApi = createPartnerRouter();
partnerApi.use("*", requirePartner);
partnerApi.route("/", me).route("/", appointments).route("/", orders);

partnerApi.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
  type: "http",
  scheme: "bearer",
  description: "An API key (`sk_live_...`) or an OAuth access token",
});
