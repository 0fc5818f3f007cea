import type { RequestIdVariables } from "hono/request-id";
import type { Dependencies } from "./dependencies";
import type { Credential, Principal } from "./domain/access/principals";
import type { Env } from "./env";

/** `RUNTIME_TOKEN`, or during its rotation `RUNTIME_TOKEN_PREVIOUS`. */
type RuntimeToken = "current" | "previous";

/** The Hono environment of every route: the Worker's bindings and what middleware sets per request. */
export type AppEnv = {
  Bindings: Env;
  /**
   * `deps`: what the domain works with, built once per request (src/dependencies.ts); `runtime`: which runtime token
   * the request presented (middleware/authenticate-runtime.ts).
   */
  Variables: RequestIdVariables & {
    deps: Dependencies;
    credential: Credential;
    principal: Principal;
    runtime: RuntimeToken;
  };
};
