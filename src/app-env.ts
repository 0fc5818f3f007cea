import type { RequestIdVariables } from "hono/request-id";
import type { Credential, Principal } from "./domain/access/principals";
import type { Env } from "./env";

/** The Hono environment of every route: the Worker's bindings and what middleware sets per request. */
export type AppEnv = {
  Bindings: Env;
  /** `runtime`: the request presented the runtime token (middleware/authenticate-runtime.ts). */
  Variables: RequestIdVariables & { credential: Credential; principal: Principal; runtime: true };
};
