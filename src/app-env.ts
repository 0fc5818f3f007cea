import type { RequestIdVariables } from "hono/request-id";
import type { Dependencies, GlobalDependencies } from "./dependencies";
import type { Credential, Principal } from "./domain/access/principals";
import type { OAuthClient } from "./domain/oauth/clients";
import type { Env } from "./env";

/** `RUNTIME_TOKEN`, or during its rotation `RUNTIME_TOKEN_PREVIOUS`. */
type RuntimeToken = "current" | "previous";

/** The Hono environment of every route: the Worker's bindings and what middleware sets per request. */
export type AppEnv = {
  Bindings: Env;
  /**
   * `globalDeps`: what the request has before it knows a business's shard, set first; `deps`: what the domain works
   * with for the request's business, set only once its shard is known from its credential, session or path (unset
   * until then: there is no default shard; src/dependencies.ts); `runtime`: which runtime token the request presented
   * (middleware/authenticate-runtime.ts).
   */
  Variables: RequestIdVariables & {
    globalDeps: GlobalDependencies;
    deps: Dependencies;
    credential: Credential;
    principal: Principal;
    runtime: RuntimeToken;
    /** Which operator token a move presented (middleware/authenticate-operator.ts). */
    operator: RuntimeToken;
    /** The app an app token belongs to, on the routes of the app as itself (src/routes/app-api.ts). */
    app: OAuthClient;
  };
};
