import { and, eq, type SQL, sql } from "drizzle-orm";
import type { ShardDatabase } from "../../db/client";
import { webhookEndpoints } from "../../db/schema";

/*
 * Listener endpoints (docs/decisions.md, Listening from a laptop): the temporary endpoint of a listening session,
 * whose deliveries go through the session's WebSocket (src/durable-objects/listening-session.ts) instead of an HTTP
 * POST. It is an ordinary `webhook_endpoints` row, so that the outbox, the claim, the attempts and the retries treat
 * it as any other; its url, `listen://<session id>`, is what sets it apart. No registered url can take that form:
 * `POST /webhooks` and `PATCH` accept https (or loopback http in development) only.
 */

export const LISTENER_URL_PREFIX = "listen://";

/** Listening sessions a business may have at once (docs/decisions.md, Listening from a laptop). */
export const MAX_LISTENING_SESSIONS = 5;

/**
 * A session's longest life, from its creation: then its socket is closed and its endpoint deleted, so that a socket
 * left open on a forgotten laptop does not receive a business's events for ever (docs/webhooks.md, Listening sessions
 * end). The CLI opens a new session when it reconnects.
 */
export const SESSION_LIFETIME_MS = 24 * 60 * 60 * 1000;

/**
 * Why the service closed a session's socket, as its close code (RFC 6455 §7.4.2: 4000–4999 are the application's):
 * its lifetime is over (open a new one), or the key or app it was opened with lost its access, or the owner ended it
 * (do not reconnect with the same credential).
 */
export const SESSION_CLOSES = {
  lifetimeOver: { code: 4000, reason: "the session's 24 hours are over: start a new one" },
  accessEnded: { code: 4001, reason: "the credential that opened this session no longer has access" },
  endedByOwner: { code: 4002, reason: "the business's owner ended this session" },
} as const;

export type SessionClose = keyof typeof SESSION_CLOSES;

export const listenerUrl = (sessionId: string) => `${LISTENER_URL_PREFIX}${sessionId}`;

export const isListenerUrl = (url: string) => url.startsWith(LISTENER_URL_PREFIX);

/** The session a listener endpoint's url names. */
export const sessionIdOf = (url: string) => url.slice(LISTENER_URL_PREFIX.length);

/** A listener endpoint's row, as SQL: `listen://` has no LIKE wildcard (`%`, `_`) to escape. */
export const isListenerEndpoint: SQL = sql`${webhookEndpoints.url} like ${`${LISTENER_URL_PREFIX}%`}`;

/**
 * A session opened on the business itself, with one of its keys or connections: not a copy of an app's session
 * (docs/decisions.md, Listening as an app), which is the app's, so that neither the business's limit of sessions nor
 * the end of one of its credentials counts or ends it.
 */
export const isOwnListenerEndpoint: SQL = sql`${isListenerEndpoint} and ${webhookEndpoints.appEndpointId} is null`;

/** A registered endpoint's row: what `GET /webhooks`, the owner's pages and the 20-endpoint limit count. */
export const isRegisteredEndpoint: SQL = sql`${webhookEndpoints.url} not like ${`${LISTENER_URL_PREFIX}%`}`;

/**
 * A session as its object is told of it (src/durable-objects/listening-session.ts): a business's, whose listener
 * endpoint is in the business's shard, or an app's (docs/decisions.md, Listening as an app), whose endpoint is one of
 * the app's own, copied into every business connected to it.
 */
export type ListeningSessionOpening = (
  | { businessId: string; appId?: never }
  | { appId: string; businessId?: never }
) & {
  sessionId: string;
  /** The listener endpoint (a business's session), or the app endpoint (an app's). */
  endpointId: number;
};

type SessionEndpoint = { businessId: string; endpointId: number; sessionId: string };

/** That session's row, by its id, its business and its url, so that no other row can ever match. */
const rowOfSession = (session: SessionEndpoint) =>
  and(
    eq(webhookEndpoints.id, session.endpointId),
    eq(webhookEndpoints.businessId, session.businessId),
    eq(webhookEndpoints.url, listenerUrl(session.sessionId)),
  );

/**
 * The end of a listening session (its socket closed, or never opened within its token's life): its endpoint is
 * deleted, and its pending deliveries with it (cascade), as for any deleted endpoint: disconnecting stops the
 * deliveries through it. One already deleted (access ended, or the partner's DELETE) deletes nothing.
 */
export async function deleteListenerEndpoint(db: ShardDatabase, session: SessionEndpoint) {
  await db.delete(webhookEndpoints).where(rowOfSession(session));
}

/**
 * Whether the endpoint a delivery is for is still the session's: ending the access that opened it, or the session,
 * deletes it in the same batch (docs/webhooks.md, Listening sessions end), so a session without it relays nothing
 * more. By the endpoint's id, unique across shards, and its url: a business's session has one such endpoint, an
 * app's one copy in each connected business (docs/decisions.md, Listening as an app).
 */
export async function listenerEndpointStored(db: ShardDatabase, sessionId: string, endpointId: number) {
  const row = await db
    .select({ id: webhookEndpoints.id })
    .from(webhookEndpoints)
    .where(and(eq(webhookEndpoints.id, endpointId), eq(webhookEndpoints.url, listenerUrl(sessionId))))
    .get();
  return row !== undefined;
}
