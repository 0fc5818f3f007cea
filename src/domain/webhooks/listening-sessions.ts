import { insertWithinLimit, rowsOfBusiness } from "../../db/insert-within-limit";
import { webhookEndpoints } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { sessionIdPrefix } from "../../durable-objects/jurisdictions";
import { forbidden } from "../../lib/api-error";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { newSigningSecret } from "../../lib/signing";
import { type EpochMs, iso } from "../../lib/time";
import { ALL_EVENTS } from "../../names-and-limits";
import { partnerWrite } from "../access/partner-operation";
import { type Principal, principalRef } from "../access/principals";
import {
  deleteListenerEndpoint,
  isListenerUrl,
  isOwnListenerEndpoint,
  type ListeningSessionOpening,
  listenerUrl,
  MAX_LISTENING_SESSIONS,
  SESSION_LIFETIME_MS,
  type SessionClose,
  sessionIdOf,
} from "./listener-endpoints";

/** How long the connect token of a new session opens its socket: the CLI connects at once (docs/decisions.md). */
export const CONNECT_TOKEN_MS = 60_000;

/** The description of a session's endpoint, which the owner's and the app's lists show. */
export const SESSION_DESCRIPTION = "secretary listen";

/**
 * `POST /api/v1/listen-sessions` (docs/decisions.md, Listening from a laptop): a listener endpoint of the credential's
 * side (so it receives what that side's endpoints receive, test events of a sandbox business included), with a new
 * signing secret, within the business's limit of sessions at once (an app's session's copies are the app's, not
 * counted: docs/decisions.md, Listening as an app); then the session's object is told of it (`openSession`).
 */
export async function createListeningSession(deps: Dependencies, principal: Principal, input: { events?: string[] }) {
  const sessionId = randomToken(sessionIdPrefix(deps.shard), 16);
  const secret = newSigningSecret();
  const now = deps.clock();
  const businessId = principal.business.id;
  const endpoint = await insertWithinLimit(
    deps.db,
    webhookEndpoints,
    {
      businessId,
      url: listenerUrl(sessionId),
      events: [...new Set(input.events ?? [ALL_EVENTS])],
      description: SESSION_DESCRIPTION,
      secret,
      ...principalRef(principal),
      createdAt: iso(now),
    },
    MAX_LISTENING_SESSIONS,
    rowsOfBusiness(webhookEndpoints, businessId, isOwnListenerEndpoint),
  );
  if (!endpoint) {
    throw forbidden(
      `A business can have at most ${MAX_LISTENING_SESSIONS} listening sessions at once: stop one (^C) before starting another.`,
      "limit_reached",
    );
  }
  const session = { sessionId, businessId, endpointId: endpoint.id };
  return openSession(deps, session, secret, now, () => deleteListenerEndpoint(deps.db, session));
}

/**
 * The session's Durable Object is told where its endpoint is and the hash of a single-use connect token, and answers
 * nothing more; the session is answered with the token, shown once. A session whose object could not be told is no
 * session: `undo` deletes its endpoint again before the error is answered.
 */
export async function openSession(
  deps: Pick<Dependencies, "listener">,
  session: ListeningSessionOpening,
  secret: string,
  now: EpochMs,
  undo: () => Promise<unknown>,
) {
  const token = randomToken("lst_");
  const tokenExpiresAt = now + CONNECT_TOKEN_MS;
  try {
    await deps.listener(session.sessionId).open({
      ...session,
      tokenHash: sha256Hex(token),
      tokenExpiresAt,
      endsAt: now + SESSION_LIFETIME_MS,
    });
  } catch (error) {
    await undo();
    throw error;
  }
  return {
    sessionId: session.sessionId,
    endpointId: session.endpointId,
    secret,
    token,
    expiresAt: iso(tokenExpiresAt),
  };
}

export const createListeningSessionOperation = partnerWrite({ write: createListeningSession });

/**
 * Closes the sockets of the sessions whose listener endpoints were just deleted (access ended, or the owner ended
 * them), with the code that says why (docs/webhooks.md, Listening sessions end). Their endpoints are gone already, so
 * nothing more is relayed through them whatever happens here: a session object that cannot be reached (a reset) keeps
 * an idle socket until its lifetime's alarm closes it, and the access that ended is not undone for it.
 */
export async function closeListeningSessions(deps: Dependencies, urls: readonly string[], why: SessionClose) {
  await Promise.allSettled(urls.filter(isListenerUrl).map((url) => deps.listener(sessionIdOf(url)).close(why)));
}
