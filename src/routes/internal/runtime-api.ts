import { Hono } from "hono";
import type { AppEnv } from "../../app-env";
import { requireRuntime } from "../../middleware/authenticate-runtime";
import { runtimeBusinessShard } from "../../middleware/runtime-business-shard";
import { actionCallsApi } from "./action-calls";
import { context } from "./context";
import { conversations } from "./conversations";
import { platformEvents } from "./events";
import { plan } from "./plan";

/** `/internal/v1`: the Secretary runtime and core platform, behind the runtime token. Not in the partner document. */
export const runtimeApi = new Hono<AppEnv>();
runtimeApi.use("*", requireRuntime);
runtimeApi.use("/businesses/:id/*", runtimeBusinessShard);
runtimeApi
  .route("/", plan)
  .route("/", platformEvents)
  .route("/", actionCallsApi)
  .route("/", conversations)
  .route("/", context);
