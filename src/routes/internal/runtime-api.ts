import { Hono } from "hono";
import type { AppEnv } from "../../app-env";
import { requireRuntime } from "../../middleware/authenticate-runtime";
import { runtimeBusinessShard } from "../../middleware/runtime-business-shard";
import { actionCallsApi } from "./action-calls";
import { businessMove } from "./business-move";
import { context } from "./context";
import { conversations } from "./conversations";
import { platformEvents } from "./events";
import { plan } from "./plan";

/** `/internal/v1`: the Secretary runtime and core platform, behind the runtime token. Not in the partner document. */
export const runtimeApi = new Hono<AppEnv>();
runtimeApi.use("*", requireRuntime);
// The move is the operators' and works on the directory itself: registered before the shard middleware, so that the
// mark it sets never refuses it (docs/scaling.md, Moving a business between shards).
runtimeApi.route("/", businessMove);
runtimeApi.use("/businesses/:id/*", runtimeBusinessShard);
runtimeApi
  .route("/", plan)
  .route("/", platformEvents)
  .route("/", actionCallsApi)
  .route("/", conversations)
  .route("/", context);
