// What the client adds to every request it sends (README.md, Retries and idempotency): its `User-Agent`, an
// `Idempotency-Key` on every POST (docs/guides/idempotency.md), and retries of the answers worth retrying, only where
// a retry cannot do anything twice.
import { VERSION } from "./version.js";

export type RetryOptions = {
  /** Retries after the first attempt: 2 unless said; 0 sends each request once. */
  maxRetries?: number;
  /** The first backoff; each retry waits twice the one before, with jitter, unless `Retry-After` says how long. */
  initialDelayMs?: number;
  /** A `Retry-After` longer than this is not waited for: the answer is given as it came. */
  maxDelayMs?: number;
};

export type Fetch = (request: Request) => Promise<Response>;

const USER_AGENT = `secretary-partner-sdk/${VERSION}`;
/** 429: the request budget (docs/guides/rate-limits.md); 5xx: the service or something in front of it failed. */
const RETRIED_STATUSES = new Set([429, 500, 502, 503, 504]);
/** Methods that do nothing twice by themselves; a POST is safe to repeat only with its `Idempotency-Key`. */
const IDEMPOTENT_METHODS = new Set(["GET", "HEAD", "OPTIONS", "PUT", "PATCH", "DELETE"]);

/** How long `Retry-After` (RFC 9110, 10.2.3: seconds or an HTTP date) asks to wait, if it says. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1000;
  const date = Date.parse(header);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Wraps `send` so that each request carries the SDK's `User-Agent` (unless the caller set one), and each POST an
 * `Idempotency-Key` (unless the caller set one), the same key on every retry: the service then answers a retried
 * create with the first answer instead of creating twice. A 429, a 5xx or a failed connection is retried with
 * exponential backoff and jitter, or after what `Retry-After` says.
 */
export function sendingWith(send: Fetch, options: RetryOptions = {}): Fetch {
  const maxRetries = options.maxRetries ?? 2;
  const initialDelayMs = options.initialDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  return async (request) => {
    const headers = new Headers(request.headers);
    if (!headers.has("User-Agent")) headers.set("User-Agent", USER_AGENT);
    if (request.method === "POST" && !headers.has("Idempotency-Key")) {
      headers.set("Idempotency-Key", crypto.randomUUID());
    }
    const retriable = IDEMPOTENT_METHODS.has(request.method) || headers.has("Idempotency-Key");
    // The body is read once, so that every attempt sends the same bytes (a key is kept per exact body).
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const attempt = () =>
      send(new Request(request.url, { method: request.method, headers, body, signal: request.signal }));
    for (let retry = 0; ; retry++) {
      const backoff = Math.min(maxDelayMs, initialDelayMs * 2 ** retry * (0.5 + Math.random() / 2));
      let response: Response;
      try {
        response = await attempt();
      } catch (error) {
        if (!retriable || retry >= maxRetries || request.signal.aborted) throw error;
        await sleep(backoff);
        continue;
      }
      if (!retriable || retry >= maxRetries || !RETRIED_STATUSES.has(response.status)) return response;
      const asked = retryAfterMs(response.headers.get("Retry-After"));
      if (asked !== undefined && asked > maxDelayMs) return response;
      await response.body?.cancel();
      await sleep(asked ?? backoff);
    }
  };
}
