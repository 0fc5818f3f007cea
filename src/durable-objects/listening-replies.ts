import { excerptText, failedAnswer, type OutboundOutcome } from "../lib/outbound";

/** The CLI's answer to a delivery message: the status its forward target answered (0 when it did not answer). */
export type ResultMessage = { type: "result"; delivery_id: number; status: number; body_excerpt?: string };

export const isResult = (value: unknown): value is ResultMessage =>
  typeof value === "object" &&
  value !== null &&
  (value as ResultMessage).type === "result" &&
  Number.isInteger((value as ResultMessage).delivery_id) &&
  Number.isInteger((value as ResultMessage).status);

/**
 * The CLI's reply read as a signed POST's outcome (src/lib/outbound.ts), so the attempt keeps the same status and
 * answer excerpt as a delivery over HTTP (an excerpt only of an answer that is not a 2xx): status 0 is the local server not answering, its reason in `body_excerpt`.
 */
export function outcomeOf({ status, body_excerpt: answer = "" }: ResultMessage): OutboundOutcome {
  if (status === 0) return { kind: "connection_failed", error: answer || "the forward target did not answer" };
  if (status >= 200 && status < 300) return { kind: "delivered", status, answer: null };
  return failedAnswer(status, excerptText(answer));
}
