import type { OutboundOutcome } from "./outbound";

/**
 * The fields each kind of line may carry (docs/operations.md, Reading the logs): ids, counts, statuses and durations
 * only. No free text from a request, a receiver or the database fits here, so no secret, token, hash, bound
 * parameter, argument, answer, customer detail, query string or body can reach a line (docs/architecture.md,
 * Everywhere).
 * Nothing of an endpoint's or action's URL either: its path and query may hold the receiver's own secret.
 */
type Lines = {
  request: {
    requestId: string;
    method: string;
    /** The matched route's pattern (`/api/v1/webhooks/:id`), never the path: paths hold ids and keys. */
    route: string;
    /** Who the request was admitted as; null when it was refused before (a 401) or needs no one (a public page). */
    principal: "api_key" | "oauth_app" | "owner" | "runtime" | "operator" | null;
    /**
     * The api key's id, the OAuth grant's id, or the owner's id: the row, never the credential. For the runtime, which
     * of its tokens: 1 `RUNTIME_TOKEN`, 2 `RUNTIME_TOKEN_PREVIOUS` (a rotation is over when no line says 2).
     */
    principalId: number | null;
    status: number;
    durationMs: number;
    d1RoundTrips: number;
  };
  delivery_batch: {
    shard: string;
    /**
     * The group's messages, the attempts they made (a message held back by a move, a duplicate or one of a delivery
     * settled already makes none), and how many delivered: every other attempt has its `delivery_attempt` line.
     */
    messages: number;
    attempts: number;
    delivered: number;
    /** From the claim to the record, and the slowest attempt's own duration. */
    durationMs: number;
    slowestMs: number;
  };
  delivery_attempt: {
    deliveryId: number;
    endpointId: number;
    eventId: string;
    attempt: number;
    ok: boolean;
    statusCode: number | null;
    /** How the attempt ended, as a kind (`timeout`, `connection_failed`…): the failure's text can name the host. */
    outcome: OutboundOutcome["kind"];
    durationMs: number;
  };
  action_call: {
    callId: number;
    actionId: number;
    status: string;
    httpStatus: number | null;
    durationMs: number;
  };
};

/** One JSON line at `info`, which Workers Logs keeps as a structured record (wrangler.toml, [observability]). */
export function logLine<K extends keyof Lines>(kind: K, fields: Lines[K]): void {
  console.log(JSON.stringify({ level: "info", kind, ...fields }));
}
