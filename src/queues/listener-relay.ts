import type { Dependencies } from "../dependencies";
import { sessionIdOf } from "../domain/webhooks/listener-endpoints";
import { type OutboundOutcome, type SignedPost, signedHeaders } from "../lib/outbound";

/**
 * The send step for a listener endpoint (`listen://<session id>`; docs/decisions.md, Listening from a laptop): the
 * request a signed POST would make, headers and body, handed to the session's Durable Object, which sends it through
 * the CLI's socket and answers the CLI's reply as an outcome of the same kind as `signedPost`'s. No address check:
 * nothing leaves for a URL here, the CLI chooses where it forwards.
 */
export async function relayToListener(
  deps: Pick<Dependencies, "listener" | "outbound" | "shard">,
  call: SignedPost,
  delivery: { id: number; event: string; endpointId: number },
): Promise<OutboundOutcome> {
  try {
    return await deps.listener(sessionIdOf(call.url)).relay({
      shard: deps.shard,
      deliveryId: delivery.id,
      endpointId: delivery.endpointId,
      event: delivery.event,
      headers: await signedHeaders(deps.outbound, call),
      body: call.body,
      timeoutMs: call.timeoutMs,
    });
  } catch (error) {
    // The object could not be reached (a reset, an overload): a failed connection, retried on the schedule.
    return { kind: "connection_failed", error: error instanceof Error ? error.message : String(error) };
  }
}
