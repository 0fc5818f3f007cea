import { Hono } from "hono";
import type { AppEnv } from "../../app-env";
import { requireRuntime } from "../../middleware/authenticate-runtime";
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
// reached. Every other route runs on its business's shard (`onRuntimeShard`), after the runtime token: a caller
// without it learns nothing of the directory.
runtimeApi.route("/", businessMove);
runtimeApi.use("*", requireRuntime);
runtimeApi
  .route("/", plan)
  .route("/", platformEvents)
  .route("/", actionCallsApi)
  .route("/", conversations)
  .route("/", context);
