import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode, StatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../app-env";
import {
  type Answer,
  claimKey,
  fingerprintOf,
  IDEMPOTENCY_HEADER,
  keepAnswer,
  principalOf,
  REPLAYED_HEADER,
  REPLAYED_HEADERS,
  readKey,
  releaseKey,
} from "../domain/access/idempotency";
import type { Principal } from "../domain/access/principals";

/**
 * A POST's key as sent, the fingerprint of its request, and, once claimed, its record. Kept per request context
 * here rather than in `AppEnv`'s variables: only this module and the admission read it.
 */
type KeyedRequest = { header: string; fingerprint: string; claimed?: number };
const keyedRequests = new WeakMap<Context, KeyedRequest>();

/**
 * Called by the admission (src/routes/operation-runner.ts) once the principal is known and admitted, so that a
 * refused credential, plan or budget never touches a key, and a key is the principal's own: the same key sent by
 * another API key or app is not a replay (docs/idempotency.md, The contract). The key is read (400), then claimed,
 * refused as used with another request (422) or still running (409), or replayed: the kept answer is returned, and
 * answered in place of the request.
 */
export async function claimIdempotencyKey(c: Context<AppEnv>, principal: Principal): Promise<Response | undefined> {
  const request = keyedRequests.get(c);
  if (!request || request.claimed !== undefined) return;
  const claim = {
    businessId: principal.business.id,
    principal: principalOf(principal),
    key: readKey(request.header),
    fingerprint: request.fingerprint,
  };
  const outcome = await claimKey(c.var.deps, claim);
  if (outcome.kind === "replay") {
    const { status, headers, body } = outcome.answer;
    // Built by the context, so that the request's own headers (its id, the rate limit's policy) are its own; a kept
    // answer without a body (a 204) is rebuilt without one.
    const replayed = { ...headers, [REPLAYED_HEADER]: "true" };
    return body === ""
      ? c.body(null, status as StatusCode, replayed)
      : c.body(body, status as ContentfulStatusCode, replayed);
  }
  request.claimed = outcome.id;
  return undefined;
}

async function answerOf(response: Response): Promise<Answer> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = response.headers.get(name);
    if (value !== null) headers[name] = value;
  }
  return { status: response.status, headers, body: await response.clone().text() };
}

/**
 * Every partner POST (docs/idempotency.md); on other methods, which are idempotent or reads, the header is ignored.
 * Without the header the request makes no extra round trip. With it: the claim at admission (one round trip, or one
 * per poll while a first request runs), then the answer is kept before it is sent (one more), so that a retry right
 * after it is a replay. A 5xx is not kept: the key is released, so that a retry runs; a 2xx or 4xx of the handler is
 * a completed answer and is kept.
 */
export const idempotency = createMiddleware<AppEnv>(async (c, next) => {
  const header = c.req.header(IDEMPOTENCY_HEADER);
  if (header === undefined || c.req.method !== "POST") return next();
  const request: KeyedRequest = {
    header,
    fingerprint: await fingerprintOf(c.req.method, c.req.path, await c.req.text()),
  };
  keyedRequests.set(c, request);
  await next();
  // Nothing claimed: a replay (answered as kept), or a request refused before its claim.
  if (request.claimed === undefined) return;
  if (c.res.status >= 500) await releaseKey(c.var.deps, request.claimed);
  else await keepAnswer(c.var.deps, request.claimed, await answerOf(c.res));
});
