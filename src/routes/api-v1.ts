import { registerWebhookEvents } from "../openapi/webhook-events";
import { actions } from "./actions";
import { appApi } from "./app-api";
import { appointments } from "./appointments";
import { eventsApi } from "./events";
import { intakes } from "./intakes";
import { knowledge } from "./knowledge";
import { listenSessions } from "./listen-sessions";
import { mcpServers } from "./mcp-servers";
import { me } from "./me";
import { orders } from "./orders";
import { createPartnerRouter } from "./partner-router";
import { sandbox } from "./sandbox";
import { registerSandboxCreation } from "./sandbox-businesses";
import { secretRotation } from "./secret-rotation";
import { webhookOperations } from "./webhooks/deliveries";
import { webhooks } from "./webhooks/endpoints";
import { webhookHealth } from "./webhooks/health";

/** Everything under `/api/v1` that a partner calls. Later resources mount here the same way. */
export const partnerApi = createPartnerRouter();
partnerApi
  .route("/", me)
  .route("/", appointments)
  .route("/", orders)
  .route("/", webhooks)
  .route("/", knowledge)
  .route("/", intakes)
  .route("/", actions)
  .route("/", mcpServers)
  .route("/", appApi)
  .route("/", eventsApi)
  .route("/", webhookOperations)
  .route("/", webhookHealth)
  .route("/", secretRotation)
  .route("/", sandbox)
  .route("/", listenSessions);

partnerApi.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
  type: "http",
  scheme: "bearer",
  description: "An API key (`sk_live_...`, or a sandbox business's test key `sk_test_...`) or an OAuth access token",
});
registerWebhookEvents(partnerApi.openAPIRegistry);
registerSandboxCreation(partnerApi.openAPIRegistry);
