import type { AppEnv } from "../../app-env";
import type { OwnerSession } from "../../domain/access/owner-sign-in";

/** The dashboard's routes run for a signed-in owner: the session (and its business) is on the context. */
export type DashboardEnv = { Bindings: AppEnv["Bindings"]; Variables: AppEnv["Variables"] & { session: OwnerSession } };
