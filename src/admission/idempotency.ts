import { and, eq, isNull, lt, or } from "drizzle-orm";
import type { Context } from "hono";
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode, StatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../app-env";
import { idempotencyKeys } from "../db/schema";
import type { Dependencies } from "../dependencies";
import type { Principal } from "../domain/access/principals";
import { ApiError, conflict, invalid } from "../lib/api-error";
import { sha256HexNative } from "../lib/secrets";
import { type Clock, type EpochMs, iso } from "../lib/time";

/**
 * Idempotency-Key (docs/idempotency.md, The contract): the first completed answer of a POST is kept 24 hours per
 * (principal, key) and answered again to the same request.
 */
export const IDEMPOTENCY_HEADER = "Idempotency-Key";
export const REPLAYED_HEADER = "Idempotent-Replayed";
export const KEPT_MS = 24 * 60 * 60 * 1000;
/**
 * A request that finds its key still running polls it this often, up to `WAIT_MS`, and replays the first request's
 * answer once it lands: a client retrying on a timeout, or firing the same call concurrently, gets one result. A
 * first request still running after the wait is a 409.
 */
const POLL_MS = 40;
export const WAIT_MS = 5_000;
/**
 * A record still marked running this long after its claim belongs to a request that died before completing (the
 * Worker evicted mid-request): no partner write runs for minutes, so the next request with the key claims it anew
 * instead of answering 409 for a day.
 */
export const ABANDONED_AFTER_MS = 2 * 60 * 1000;

/** The headers of an answer a replay repeats: what describes the body and where it is, never per-request ones. */
const REPLAYED_HEADERS = ["Content-Type", "Location"] as const;

/** 1 to 255 printable ASCII characters (space to tilde). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

type Claim = { businessId: string; principal: string; key: string; fingerprint: string };
type Answer = { status: number; headers: Record<string, string>; body: string };

/** The key as the request sent it, refused (400) unless 1 to 255 printable ASCII characters. */
function readKey(header: string): string {
  if (!KEY_PATTERN.test(header)) {
    throw invalid(`The header ${IDEMPOTENCY_HEADER} must be 1 to 255 printable ASCII characters.`, IDEMPOTENCY_HEADER);
  }
  return header;
}

/** What "the same request" means: a SHA-256 of its method, path and body. */
export const fingerprintOf = (method: string, path: string, body: string) =>
  sha256HexNative(`${method}\n${path}\n${body}`);

/**
 * Keys are kept per principal, an API key or an app connection, not per owner side: the same key from another of the
 * business's API keys is another request (docs/idempotency.md, The contract).
 */
const principalOf = (principal: Principal) =>
  principal.kind === "api_key" ? `key:${principal.apiKeyId}` : `app:${principal.grantId}`;

type Outcome = { kind: "claimed"; id: number } | { kind: "replay"; answer: Answer } | { kind: "running" };

/**
 * One round trip: the claim (an insert that, on the unique index, replaces only a record older than 24 hours, or one
 * still running after `ABANDONED_AFTER_MS`) and
 * the record as it stands, in one D1 batch. Of concurrent first requests exactly one insert answers a row.
 */
async function tryClaim(deps: Dependencies, claim: Claim, now: EpochMs): Promise<Outcome> {
  const { db } = deps;
  const fresh = { ...claim, status: null, headers: null, body: null, createdAt: iso(now) };
  const [claimed, [record]] = await db.batch([
    db
      .insert(idempotencyKeys)
      .values(fresh)
      .onConflictDoUpdate({
        target: [idempotencyKeys.principal, idempotencyKeys.key],
        set: fresh,
        setWhere: or(
          lt(idempotencyKeys.createdAt, iso(now - KEPT_MS)),
          and(isNull(idempotencyKeys.status), lt(idempotencyKeys.createdAt, iso(now - ABANDONED_AFTER_MS))),
        ),
      })
      .returning({ id: idempotencyKeys.id }),
    db
      .select()
      .from(idempotencyKeys)
      .where(and(eq(idempotencyKeys.principal, claim.principal), eq(idempotencyKeys.key, claim.key))),
  ]);
  const won = claimed[0];
  if (won) return { kind: "claimed", id: won.id };
  // One batch is one transaction: a claim that lost found the record that beat it.
  if (!record) throw new Error("An idempotency key's claim lost to a record it cannot read.");
  if (record.fingerprint !== claim.fingerprint) {
    throw new ApiError(
      "idempotency_key_reused",
      `This ${IDEMPOTENCY_HEADER} was already used with another request (method, path or body); use a new key.`,
      { param: IDEMPOTENCY_HEADER },
    );
  }
  if (record.status === null) return { kind: "running" };
  return { kind: "replay", answer: { status: record.status, headers: record.headers ?? {}, body: record.body ?? "" } };
}

/** How the wait for a running request passes time: the clock, and a pause between two polls (tests drive both). */
export type Waiting = { clock: Clock; pause: (ms: number) => Promise<unknown> };

const REAL_TIME: Waiting = { clock: Date.now, pause: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) };

/**
 * The key claimed for this request (its record's id), or the answer to replay. A key in use by a request still
 * running is polled until it completes, or is released (then claimed again), for at most `WAIT_MS`; then 409.
 */
export async function claimKey(
  deps: Dependencies,
  claim: Claim,
  { clock, pause }: Waiting = REAL_TIME,
): Promise<Exclude<Outcome, { kind: "running" }>> {
  const deadline = clock() + WAIT_MS;
  for (;;) {
    const outcome = await tryClaim(deps, claim, clock());
    if (outcome.kind !== "running") return outcome;
    if (clock() + POLL_MS > deadline) {
      throw conflict(
        `A request with this ${IDEMPOTENCY_HEADER} is still running; retry once it has completed.`,
        "idempotency_key_in_use",
      );
    }
    await pause(POLL_MS);
  }
}

/** The first completed answer, kept for replays (one round trip). */
async function keepAnswer(deps: Dependencies, id: number, answer: Answer): Promise<void> {
  await deps.db.update(idempotencyKeys).set(answer).where(eq(idempotencyKeys.id, id));
}

/** A request that failed on our side: the key is released, so that a retry runs (one round trip). */
async function releaseKey(deps: Dependencies, id: number): Promise<void> {
  await deps.db.delete(idempotencyKeys).where(eq(idempotencyKeys.id, id));
}

/** A POST's key as sent, the fingerprint of its request, and, once claimed, its record: per request, private here. */
type KeyedRequest = { header: string; fingerprint: string; claimed?: number };
const keyedRequests = new WeakMap<Context, KeyedRequest>();

/**
 * Called by the admission (partner-admission.ts) once the principal is known and admitted, so that a
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
