import { DurableObject } from "cloudflare:workers";
import type { ShardName } from "../db/shards";
import { globalDependencies } from "../dependencies-from-env";
import { MOVING_RETRY_AFTER_SECONDS } from "../domain/access/business-moving";
import { shardOfBusiness } from "../domain/access/directory";
import { endAppListeningSession } from "../domain/webhooks/app-listening-sessions";
import {
  deleteListenerEndpoint,
  type ListeningSessionOpening,
  listenerEndpointStored,
  SESSION_CLOSES,
  SESSION_LIFETIME_MS,
  type SessionClose,
} from "../domain/webhooks/listener-endpoints";
import type { OutboundOutcome } from "../lib/outbound";
import { secretsEqual } from "../lib/secret-comparison";
import { sha256Hex } from "../lib/secrets";
import { isResult, outcomeOf } from "./listening-replies";

const SESSION_KEY = "session";

/**
 * The WebSocket subprotocol a listening socket is opened with, the session's connect token offered after it
 * (`Sec-WebSocket-Protocol: secretary-listen, lst_…`; RFC 6455 §4.1): a WebSocket client cannot send `Authorization`,
 * and a token in the URL would be kept by every log of the request's path. The server selects this one.
 */
export const LISTEN_SUBPROTOCOL = "secretary-listen";

/** The connect token a socket's handshake offers after `LISTEN_SUBPROTOCOL`, or "" when it offers none. */
export function offeredToken(request: Request): string {
  const [protocol, token] = (request.headers.get("Sec-WebSocket-Protocol") ?? "").split(",").map((part) => part.trim());
  return protocol === LISTEN_SUBPROTOCOL ? (token ?? "") : "";
}

/** The keepalive messages, exactly as the CLI sends and expects them (cli/src/listen.ts). */
export const KEEPALIVE_PING = '{"type":"ping"}';
export const KEEPALIVE_PONG = '{"type":"pong"}';

/**
 * What the session keeps in storage, since hibernation drops its memory: its owner and endpoint, and its token. Not
 * its shard: the business may move while the session lasts, so the directory names it when the session writes.
 */
export type ListeningSessionRecord = ListeningSessionOpening & {
  /** SHA-256 of the single-use connect token (docs/architecture.md, Principals and owner sides: hashes only). */
  tokenHash: string;
  tokenExpiresAt: number;
  /**
   * When the session ends, connected or not: its creation and `SESSION_LIFETIME_MS` (absent from a session opened by
   * a version before sessions had a lifetime: it lives as long from its connection).
   */
  endsAt?: number;
  connected: boolean;
  /** The socket closed while the business moved: the endpoint is deleted once the move has ended (`end`). */
  ended?: true;
};

/**
 * One delivery, as the consumer hands it over (src/queues/listener-relay.ts): what the socket message carries, and the
 * shard the consumer claimed it in.
 */
export type RelayedDelivery = {
  shard: ShardName;
  deliveryId: number;
  /** The endpoint the delivery is for: the session's, or, for an app's session, its copy in the delivery's business. */
  endpointId: number;
  event: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
};

/**
 * One per listening session, in its business's jurisdiction, or the EU's for an app's (`sessionObject`,
 * src/durable-objects/jurisdictions.ts; docs/decisions.md, Listening from a laptop): the WebSocket of
 * the partner's CLI, accepted with the hibernation API so that an idle session costs no duration, and the relay of
 * each delivery through it. The session ends, and its endpoint is deleted, when the socket closes or errs, or when
 * its connect token expires unused (the alarm).
 */
export class ListeningSession extends DurableObject {
  /** Replies awaited by `relay`, by delivery id. Only while a relay runs, which keeps the object awake. */
  private readonly waiting = new Map<number, (outcome: OutboundOutcome) => void>();

  /**
   * The CLI's keepalive, a `ping` message every 30 seconds, is answered `pong` by the runtime itself without waking
   * the object: an idle session stays hibernated, and no proxy on the way closes a quiet connection.
   */
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(KEEPALIVE_PING, KEEPALIVE_PONG));
  }

  private record() {
    return this.ctx.storage.get<ListeningSessionRecord>(SESSION_KEY);
  }

  /** What this call's work uses (src/dependencies.ts), built as every entry builds it; a shard's once it is known. */
  private dependencies() {
    return globalDependencies(this.env, (work) => this.ctx.waitUntil(work));
  }

  /** Called by `POST /api/v1/listen-sessions` once the endpoint is stored: the session starts waiting for its socket. */
  async open(
    record: ListeningSessionOpening & Pick<ListeningSessionRecord, "tokenHash" | "tokenExpiresAt" | "endsAt">,
  ) {
    await this.ctx.storage.put(SESSION_KEY, { ...record, connected: false });
    await this.ctx.storage.setAlarm(record.tokenExpiresAt);
  }

  /**
   * `GET /api/v1/listen-sessions/{id}/socket` (RFC 6455, 4.2: the server's handshake): the connect token the handshake
   * offers (`offeredToken`) is the credential, compared in constant time, and used once, marked before the socket is
   * accepted. 404 for a session that does not exist (or has ended), 401 for a wrong, expired or used token.
   */
  override async fetch(request: Request): Promise<Response> {
    const session = await this.record();
    if (!session) return new Response(null, { status: 404 });
    const token = offeredToken(request);
    const now = this.dependencies().clock();
    const valid =
      !session.connected && now < session.tokenExpiresAt && secretsEqual(sha256Hex(token), session.tokenHash);
    if (!valid) return new Response(null, { status: 401 });
    await this.ctx.storage.put(SESSION_KEY, { ...session, connected: true });
    // From now on the one alarm of the session is the end of its life.
    await this.ctx.storage.setAlarm(session.endsAt ?? now + SESSION_LIFETIME_MS);
    const [client, server] = Object.values(new WebSocketPair()) as [WebSocket, WebSocket];
    this.ctx.acceptWebSocket(server);
    return new Response(null, {
      status: 101,
      webSocket: client,
      headers: { "Sec-WebSocket-Protocol": LISTEN_SUBPROTOCOL },
    });
  }

  /**
   * One delivery through the socket: one JSON message, then the CLI's `result` for that delivery id within the
   * answer time. The outcome reads as a signed POST's (src/lib/outbound.ts), so the attempt is recorded, and retried,
   * as any other: 2xx is delivered, another status an HTTP error, no reply a timeout, no socket a failed connection.
   */
  async relay(delivery: RelayedDelivery): Promise<OutboundOutcome> {
    const [socket] = this.ctx.getWebSockets();
    const session = await this.record();
    if (!socket || !session) return { kind: "connection_failed", error: "the listening session is not connected" };
    const { shard, deliveryId, endpointId, event, headers, body, timeoutMs } = delivery;
    // A delivery claimed before the access ended, or relayed before the close reaches this object, goes no further.
    if (!(await listenerEndpointStored(this.dependencies().onShard(shard).db, session.sessionId, endpointId))) {
      return { kind: "connection_failed", error: "the listening session ended" };
    }
    return new Promise<OutboundOutcome>((resolve) => {
      const timer = setTimeout(() => settleWith({ kind: "timeout" }), timeoutMs);
      const settleWith = (outcome: OutboundOutcome) => {
        clearTimeout(timer);
        this.waiting.delete(deliveryId);
        resolve(outcome);
      };
      this.waiting.get(deliveryId)?.({ kind: "connection_failed", error: "replaced by a newer attempt" });
      this.waiting.set(deliveryId, settleWith);
      try {
        socket.send(JSON.stringify({ type: "delivery", delivery_id: deliveryId, event, headers, body }));
      } catch (error) {
        settleWith({ kind: "connection_failed", error: String(error) });
      }
    });
  }

  /** The CLI's replies; anything else on the socket is ignored. */
  override webSocketMessage(_socket: WebSocket, message: string | ArrayBuffer): void {
    let reply: unknown;
    try {
      reply = JSON.parse(typeof message === "string" ? message : new TextDecoder().decode(message));
    } catch {
      return;
    }
    if (isResult(reply)) this.waiting.get(reply.delivery_id)?.(outcomeOf(reply));
  }

  /** RFC 6455, 7.1.5: the close the CLI started (^C) is answered with the same code, and the session ends. */
  override async webSocketClose(socket: WebSocket, code: number): Promise<void> {
    try {
      socket.close(code === 1005 || code === 1006 ? 1000 : code, "session ended");
    } catch {
      // Already closed: the runtime answered the close itself.
    }
    await this.end();
  }

  override async webSocketError(): Promise<void> {
    await this.end();
  }

  /**
   * The session's socket is closed by the service, with the code and reason of `why` (`SESSION_CLOSES`), and the
   * session ends: access ended (its listener endpoint is deleted by then, so nothing more is relayed), or the owner
   * ended it. A session already over answers nothing.
   */
  async close(why: SessionClose): Promise<void> {
    const { code, reason } = SESSION_CLOSES[why];
    for (const socket of this.ctx.getWebSockets()) {
      try {
        socket.close(code, reason);
      } catch {
        // Closed already.
      }
    }
    await this.end();
  }

  /**
   * The connect token's life is over: a session never connected ends (nothing will ever listen on it); a session that
   * ended while its business moved deletes its endpoint now; a connected session's only alarm is the end of its life.
   */
  override async alarm(): Promise<void> {
    const session = await this.record();
    if (!session) return;
    if (!session.connected || session.ended) await this.end();
    else await this.close("lifetimeOver");
  }

  /**
   * Deletes the endpoint (its pending deliveries go with it) in the shard the directory names now, and forgets the
   * session; relays waiting fail. While the business moves, its rows are being copied, so the deletion waits for the
   * move to end (an alarm), else the copy would keep the endpoint (docs/scaling.md, Moving a business between shards).
   * An app's session deletes its app endpoint and every business's copy of it, in every shard.
   */
  private async end(): Promise<void> {
    for (const settleWith of [...this.waiting.values()]) {
      settleWith({ kind: "connection_failed", error: "the listening session ended" });
    }
    const session = await this.record();
    if (!session) return;
    const deps = this.dependencies();
    if (session.appId !== undefined) {
      await endAppListeningSession(deps, session.appId, session.endpointId);
    } else {
      const { shard, moving } = await shardOfBusiness(deps.global, session.businessId);
      if (moving) {
        await this.ctx.storage.put(SESSION_KEY, { ...session, ended: true });
        await this.ctx.storage.setAlarm(deps.clock() + MOVING_RETRY_AFTER_SECONDS * 1000);
        return;
      }
      await deleteListenerEndpoint(deps.onShard(shard).db, session);
    }
    await this.ctx.storage.deleteAll();
  }
}
