import { insertWithinLimit, rowsOfBusiness } from "../../db/insert-within-limit";
import { webhookEndpoints } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { sessionIdPrefix } from "../../durable-objects/jurisdictions";
import { forbidden } from "../../lib/api-error";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { newSigningSecret } from "../../lib/signing";
import { iso } from "../../lib/time";
import { ALL_EVENTS } from "../../names-and-limits";
import { partnerWrite } from "../access/partner-operation";
import { type Principal, principalRef } from "../access/principals";
import {
  deleteListenerEndpoint,
  isListenerEndpoint,
  isListenerUrl,
  listenerUrl,
  MAX_LISTENING_SESSIONS,
  SESSION_LIFETIME_MS,
  type SessionClose,
  sessionIdOf,
} from "./listener-endpoints";

/** How long the connect token of a new session opens its socket: the CLI connects at once (docs/decisions.md). */
export const CONNECT_TOKEN_MS = 60_000;

/**
 * `POST /api/v1/listen-sessions` (docs/decisions.md, Listening from a laptop): a listener endpoint of the credential's
 * side (so it receives what that side's endpoints receive, test events of a sandbox business included), with a new
 * signing secret, within the business's limit of sessions at once; then the session's Durable Object is told where
 * the endpoint is and the hash of a single-use connect token, and answers nothing more. A session whose object could
 * not be told is no session: its endpoint is deleted again before the error is answered.
 */
export async function createListeningSession(deps: Dependencies, principal: Principal, input: { events?: string[] }) {
  const sessionId = randomToken(sessionIdPrefix(deps.shard), 16);
  const token = randomToken("lst_");
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
      description: "secretary listen",
      secret,
      ...principalRef(principal),
      createdAt: iso(now),
    },
    MAX_LISTENING_SESSIONS,
    rowsOfBusiness(webhookEndpoints, businessId, isListenerEndpoint),
  );
  if (!endpoint) {
    throw forbidden(
      `A business can have at most ${MAX_LISTENING_SESSIONS} listening sessions at once: stop one (^C) before starting another.`,
      "limit_reached",
    );
  }
  const tokenExpiresAt = now + CONNECT_TOKEN_MS;
  const session = { sessionId, businessId, endpointId: endpoint.id };
  try {
    await deps.listener(sessionId).open({
      ...session,
      tokenHash: sha256Hex(token),
      tokenExpiresAt,
      endsAt: now + SESSION_LIFETIME_MS,
    });
  } catch (error) {
    await deleteListenerEndpoint(deps.db, session);
    throw error;
  }
  return { sessionId, endpointId: endpoint.id, secret, token, expiresAt: iso(tokenExpiresAt) };
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
