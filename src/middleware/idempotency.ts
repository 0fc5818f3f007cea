import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "../app-env";
import { database } from "../db/client";
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
import { ApiError } from "../lib/errors";

/**
 * A POST's key as sent, the fingerprint of its request, and, once claimed, its record. Kept per request context
 * here rather than in `AppEnv`'s variables: only this module and the admission read it.
 */
type KeyedRequest = { header: string; fingerprint: string; claimed?: number };
const keyedRequests = new WeakMap<Context, KeyedRequest>();

/**
 * A replay ends the request at its admission, before the handler writes. It is an ApiError so that the error
 * mapping answers it without logging it as unexpected; `idempotency` then answers the kept answer in its place (the
 * mapping's 200 is never sent).
 */
class Replay extends ApiError {
  constructor(readonly answer: Answer) {
    super(200, "Replayed");
  }
}

/**
 * Called by the admission (authenticate-partner.ts) once the principal is known and admitted, so that a refused
 * credential, plan or budget never touches a key, and a key is the principal's own: the same key sent by another API
 * key or app is not a replay (docs/idempotency.md, The contract). The key is read (400), then claimed, replayed
 * (throws), refused as used with another request (422) or still running (409).
 */
export async function claimIdempotencyKey(c: Context<AppEnv>, principal: Principal): Promise<void> {
  const request = keyedRequests.get(c);
  if (!request || request.claimed !== undefined) return;
  const claim = {
    businessId: principal.business.id,
    principal: principalOf(principal),
    key: readKey(request.header),
    fingerprint: request.fingerprint,
  };
  const outcome = await claimKey(database(c.env.DB), claim);
  if (outcome.kind === "replay") throw new Replay(outcome.answer);
  request.claimed = outcome.id;
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
  if (c.error instanceof Replay) {
    const { status, headers, body } = c.error.answer;
    // A kept answer without a body (a 204) must be rebuilt without one.
    c.res = new Response(body === "" ? null : body, { status, headers: { ...headers, [REPLAYED_HEADER]: "true" } });
    return;
  }
  if (request.claimed === undefined) return;
  const db = database(c.env.DB);
  if (c.res.status >= 500) await releaseKey(db, request.claimed);
  else await keepAnswer(db, request.claimed, await answerOf(c.res));
});
