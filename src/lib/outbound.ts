import { ConnectionSlots } from "./connection-slots";
import { type OutboundPolicy as AddressPolicy, unreachableReason } from "./public-address";
import { type SigningSecrets, signatureHeaders } from "./signing";

/**
 * The one outbound signed call (docs/architecture.md, Outbound calls): deliveries, action calls and the owner's Test
 * buttons all go through `signedPost`: the public-address check → the POST, freshly signed under every live secret
 * (lib/signing.ts) → a timeout → no redirect followed (one could lead to a private address) → a bounded read → a
 * typed outcome, which each caller words for its own records. An app's metadata document is read through the same
 * steps, unsigned (`getDocument`).
 */

/**
 * What every outbound call needs from the Worker's configuration, built once from its bindings per unit of work (a
 * request, a queue batch): with it, that unit's connection slots and host lookups (lib/connection-slots.ts).
 */
export type OutboundPolicy = Required<AddressPolicy> & {
  /** DNS-over-HTTPS resolver (JSON API) for the address check; configuration, so tests point it at their own. */
  resolverUrl: string;
  /** `User-Agent: <serviceName>-<Kind>/1.0 (+<baseUrl>)` (docs/webhooks.md, The request; docs/decisions.md, Calls). */
  serviceName: string;
  baseUrl: string;
};

export const outboundPolicy = (env: {
  ALLOW_LOOPBACK_URLS: string;
  DOH_RESOLVER_URL: string;
  SERVICE_NAME: string;
  BASE_URL: string;
}): OutboundPolicy => ({
  // The dev-only switch (README.md, Configuration): loopback targets only when it is exactly "true".
  allowLoopback: env.ALLOW_LOOPBACK_URLS === "true",
  slots: new ConnectionSlots(),
  lookups: new Map(),
  resolverUrl: env.DOH_RESOLVER_URL,
  serviceName: env.SERVICE_NAME,
  baseUrl: env.BASE_URL,
});

export type SignedPost = {
  /** "Webhooks" or "Actions": names the User-Agent. */
  kind: string;
  url: string;
  body: string;
  /** Headers besides Content-Type, User-Agent and the signature headers. */
  headers: Record<string, string>;
  /** `webhook-id` (docs/webhooks.md, The request; Action calls): the event's `evt_` id, or the action call's id. */
  webhookId: string;
  /** The current secret, and the previous one while a rotation lets it sign too (lib/signing.ts). */
  secrets: SigningSecrets;
  /** The signature's `t` and `webhook-timestamp`: fresh for every attempt (docs/webhooks.md, The signatures). */
  unixSeconds: number;
  timeoutMs: number;
  /** Read the answer, at most this many bytes, and require JSON (action calls). Without it the answer is dropped. */
  readAnswerBytes?: number;
  /**
   * With `readAnswerBytes`: any text is the answer, and its headers come with it (an MCP server answers JSON or an
   * event stream, and names its session in a header: src/lib/mcp-client.ts).
   */
  anyText?: boolean;
  /** POST unless it says DELETE (the end of an MCP session, whose body is empty). */
  method?: "POST" | "DELETE";
  /**
   * Without `readAnswerBytes`: keep the start of an answer that is not a 2xx as `excerpt` (webhook attempts). A 2xx
   * answer is dropped unread all the same: what it says changes nothing, and reading it cost a delivery CPU time.
   */
  keepExcerpt?: boolean;
};

export type OutboundOutcome =
  | { kind: "delivered"; status: number; answer: string | null; headers?: Headers }
  | { kind: "http_error"; status: number; excerpt?: string | null }
  | { kind: "redirect"; status: number; excerpt?: string | null }
  | { kind: "timeout" }
  | { kind: "refused_address"; reason: string }
  | { kind: "unresolved"; error: string }
  | { kind: "connection_failed"; error: string }
  | { kind: "too_large"; status: number }
  | { kind: "not_json"; status: number };

/** Reads at most `max` bytes of a body: undefined when it is larger (the rest is not read). */
async function readAtMost(body: ReadableStream<Uint8Array> | null, max: number): Promise<Uint8Array | undefined> {
  if (!body) return new Uint8Array();
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** How much of an answer an excerpt reads, and keeps (docs/decisions.md, The owner's dashboard). */
const EXCERPT_READ_BYTES = 1024;
const EXCERPT_CHARS = 200;

/**
 * The start of an answer, shown to the owner as text: the first 1 KB at most is read and the rest cancelled, so a huge
 * or endless answer costs nothing more; decoded as UTF-8 (a character cut by the 1 KB is dropped, an invalid byte is
 * U+FFFD) and cut at 200 characters, never inside a surrogate pair. Null for an empty answer or one that fails to read.
 */
async function excerptOf(response: Response): Promise<string | null> {
  const body = response.body;
  if (!body) return null;
  // An answer whose length says it fits is read in one call, which costs the consumer a fraction of a reader's steps:
  // its framing bounds it (RFC 9112, section 6.3).
  const length = response.headers.get("Content-Length");
  if (length !== null && Number(length) <= EXCERPT_READ_BYTES) {
    return excerptText(await response.text().catch(() => ""));
  }
  const reader = body.getReader();
  const decoder = new TextDecoder("utf-8");
  let text = "";
  let read = 0;
  try {
    while (read < EXCERPT_READ_BYTES) {
      const { done, value } = await reader.read();
      if (done) break;
      const part = value.subarray(0, EXCERPT_READ_BYTES - read);
      read += part.byteLength;
      text += decoder.decode(part, { stream: true });
    }
    await reader.cancel();
  } catch {
    // What was read before the failure is still the answer's start.
  }
  return excerptText(text);
}

/** An answer's text cut to its excerpt: 200 characters, never inside a surrogate pair; null when empty. */
export function excerptText(text: string): string | null {
  const excerpt = Array.from(text).slice(0, EXCERPT_CHARS).join("");
  return excerpt === "" ? null : excerpt;
}

/** A non-2xx answer's outcome: a 3xx is a redirect (never followed), anything else an HTTP error. */
export const failedAnswer = (status: number, excerpt: string | null): OutboundOutcome =>
  status >= 300 && status < 400 ? { kind: "redirect", status, excerpt } : { kind: "http_error", status, excerpt };

/** How a call reads its answer (`SignedPost`'s members of the same names). */
type Reading = Pick<SignedPost, "timeoutMs" | "readAnswerBytes" | "anyText" | "keepExcerpt">;

/** A 2xx answer, read as the call asks: dropped unread, or at most N bytes of UTF-8 JSON. */
async function answerOf(response: Response, call: Reading): Promise<OutboundOutcome> {
  const maxBytes = call.readAnswerBytes;
  if (maxBytes === undefined) {
    await response.body?.cancel();
    return { kind: "delivered", status: response.status, answer: null };
  }
  const bytes = await readAtMost(response.body, maxBytes);
  if (!bytes) return { kind: "too_large", status: response.status };
  try {
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    if (call.anyText) return { kind: "delivered", status: response.status, answer: text, headers: response.headers };
    JSON.parse(text);
    return { kind: "delivered", status: response.status, answer: text };
  } catch {
    return { kind: "not_json", status: response.status };
  }
}

/**
 * Every header of a signed call: Content-Type, User-Agent, the call's own and the signature headers. A listening
 * session's relay sends the same ones through its socket (src/queues/listener-relay.ts).
 */
export const signedHeaders = async (policy: OutboundPolicy, call: Omit<SignedPost, "url" | "timeoutMs">) => ({
  "Content-Type": "application/json",
  "User-Agent": `${policy.serviceName}-${call.kind}/1.0 (+${policy.baseUrl})`,
  ...call.headers,
  ...(await signatureHeaders(call.secrets, call.webhookId, call.body, call.unixSeconds)),
});

/** A failed answer: its excerpt when the call keeps one, else dropped unread. */
async function dropOrExcerpt(response: Response, call: Reading): Promise<string | null> {
  if (call.keepExcerpt) return excerptOf(response);
  await response.body?.cancel();
  return null;
}

/**
 * The steps every outbound call takes: the public-address check → `request()` (built once the address may be called)
 * → a connection slot, which it holds until the answer's headers arrive → the timeout, from once it has one, to the
 * end of the read → no redirect followed → the answer read as `reading` asks.
 */
async function outboundCall(
  policy: OutboundPolicy,
  url: string,
  reading: Reading,
  request: () => Promise<RequestInit>,
): Promise<OutboundOutcome> {
  try {
    const refused = await unreachableReason(url, policy.resolverUrl, policy);
    if (refused) return { kind: "refused_address", reason: refused };
  } catch (error) {
    return { kind: "unresolved", error: String(error) };
  }
  const init = await request();
  let signal: AbortSignal | undefined;
  const send = () => {
    signal = AbortSignal.timeout(reading.timeoutMs);
    return fetch(url, { ...init, redirect: "manual", signal });
  };
  try {
    const response = await policy.slots.run(send);
    // The slot is free again: the answer's body is read, within the same timeout, without holding one.
    if (response.status >= 200 && response.status < 300) return await answerOf(response, reading);
    return failedAnswer(response.status, await dropOrExcerpt(response, reading));
  } catch (error) {
    if (signal?.aborted) return { kind: "timeout" };
    return { kind: "connection_failed", error: error instanceof Error ? error.message : String(error) };
  }
}

/** Signed before it waits for a connection: the signature's time is the attempt's. A DELETE has no body to type. */
export const signedPost = (policy: OutboundPolicy, call: SignedPost) =>
  outboundCall(policy, call.url, call, async () => {
    const headers: Record<string, string> = await signedHeaders(policy, call);
    if (call.method === "DELETE") delete headers["Content-Type"];
    return { method: call.method ?? "POST", headers, body: call.method === "DELETE" ? undefined : call.body };
  });

/**
 * A public document read under the same rules, unsigned (a client's metadata document:
 * src/domain/oauth/client-metadata-documents.ts): a GET asking for JSON, of at most `maxBytes` of UTF-8 text, whose
 * answer keeps its headers; the caller parses it.
 */
export const getDocument = (policy: OutboundPolicy, kind: string, url: string, timeoutMs: number, maxBytes: number) =>
  outboundCall(policy, url, { timeoutMs, readAnswerBytes: maxBytes, anyText: true }, async () => ({
    headers: { Accept: "application/json", "User-Agent": `${policy.serviceName}-${kind}/1.0 (+${policy.baseUrl})` },
  }));
