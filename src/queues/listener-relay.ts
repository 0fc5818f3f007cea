import type { ListeningSession } from "../durable-objects/listening-session";
import { type OutboundOutcome, type OutboundPolicy, type SignedPost, signedHeaders } from "../lib/outbound";

/**
 * The send step for a listener endpoint (`listen://<session id>`; docs/decisions.md, Listening from a laptop): the
 * request a signed POST would make, headers and body, handed to the session's Durable Object, which sends it through
 * the CLI's socket and answers the CLI's reply as an outcome of the same kind as `signedPost`'s. No address check:
 * nothing leaves for a URL here, the CLI chooses where it forwards.
 */
export async function relayToListener(
  session: DurableObjectStub<ListeningSession>,
  policy: OutboundPolicy,
  call: SignedPost,
  delivery: { id: number; event: string },
): Promise<OutboundOutcome> {
  try {
    return await session.relay({
      deliveryId: delivery.id,
      event: delivery.event,
      headers: signedHeaders(policy, call),
      body: call.body,
      timeoutMs: call.timeoutMs,
    });
  } catch (error) {
    // The object could not be reached (a reset, an overload): a failed connection, retried on the schedule.
    return { kind: "connection_failed", error: error instanceof Error ? error.message : String(error) };
  }
}
