import type { Dependencies, GlobalDependencies } from "../../dependencies";
import { APP_SESSION_ID_PREFIX } from "../../durable-objects/jurisdictions";
import { ApiError } from "../../lib/api-error";
import { randomToken } from "../../lib/secrets";
import { addAppEndpoint, deleteAppEndpoint, MAX_APP_ENDPOINTS } from "./app-endpoints";
import { listenerUrl } from "./listener-endpoints";
import { openSession, SESSION_DESCRIPTION } from "./listening-sessions";

/*
 * An app's listening session (docs/decisions.md, Listening as an app): `secretary listen --app` hears every business
 * connected to the app through one socket. Its endpoint is an app endpoint whose url is the session's listener url,
 * so it is copied into every business connected now and at each later approval (app-endpoints.ts), and each copy is
 * delivered to, recorded and retried as any listener endpoint of the business, through the one session object.
 */

/**
 * `POST /api/v1/app/listen-sessions`: the session's app endpoint, one of the app's 20 (each is copied into every
 * connected business, so the 20 bound what one event of a business sends for the app), then its copy in every
 * connected business, shard by shard at once, then its object. A failure removes the endpoint again, copies and all.
 */
export async function createAppListeningSession(
  deps: GlobalDependencies & Pick<Dependencies, "listener">,
  appId: string,
  input: { events?: string[] },
) {
  const sessionId = randomToken(APP_SESSION_ID_PREFIX, 16);
  const now = deps.clock();
  const endpoint = await addAppEndpoint(
    deps,
    appId,
    { url: listenerUrl(sessionId), events: input.events, description: SESSION_DESCRIPTION },
    `An app can have at most ${MAX_APP_ENDPOINTS} webhook endpoints, its listening sessions among them: delete one or stop a session before starting another.`,
  );
  const undo = () => endAppListeningSession(deps, appId, endpoint.id).catch(() => undefined);
  return openSession(deps, { sessionId, appId, endpointId: endpoint.id }, endpoint.secret, now, undo);
}

/**
 * The end of an app's session: its app endpoint and every business's copy, with their deliveries. One the app
 * deleted already (`DELETE /app/webhooks/{id}`) leaves nothing to do.
 */
export const endAppListeningSession = (deps: GlobalDependencies, appId: string, endpointId: number) =>
  deleteAppEndpoint(deps, appId, endpointId).catch((error: unknown) => {
    if (!(error instanceof ApiError && error.code === "not_found")) throw error;
  });
