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

/**
 * `/internal/v1`: the Secretary runtime and core platform, behind the runtime token, and the operators' move of a
 * business, behind theirs. Not in the partner document.
 */
export const runtimeApi = new Hono<AppEnv>();
// The move checks the operator token itself and answers before the runtime token's check, registered after it, is
// reached; and before the shard middleware, since it works on the directory and its mark must never refuse it
// (docs/scaling.md, Moving a business between shards).
runtimeApi.route("/", businessMove);
runtimeApi.use("*", requireRuntime);
runtimeApi.use("/businesses/:id/*", runtimeBusinessShard);
runtimeApi
  .route("/", plan)
  .route("/", platformEvents)
  .route("/", actionCallsApi)
  .route("/", conversations)
  .route("/", context);
