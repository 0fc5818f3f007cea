import { and, eq, isNull, lt, or } from "drizzle-orm";
import { idempotencyKeys } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { ApiError, conflict, invalid } from "../../lib/errors";
import { sha256HexNative } from "../../lib/secrets";
import { type Clock, type EpochMs, iso } from "../../lib/time";
import type { Principal } from "./principals";

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
export const REPLAYED_HEADERS = ["Content-Type", "Location"] as const;

/** 1 to 255 printable ASCII characters (space to tilde). */
const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

export type Claim = { businessId: string; principal: string; key: string; fingerprint: string };
export type Answer = { status: number; headers: Record<string, string>; body: string };

/** The key as the request sent it, refused (400) unless 1 to 255 printable ASCII characters. */
export function readKey(header: string): string {
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
export const principalOf = (principal: Principal) =>
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
export async function keepAnswer(deps: Dependencies, id: number, answer: Answer): Promise<void> {
  await deps.db.update(idempotencyKeys).set(answer).where(eq(idempotencyKeys.id, id));
}

/** A request that failed on our side: the key is released, so that a retry runs (one round trip). */
export async function releaseKey(deps: Dependencies, id: number): Promise<void> {
  await deps.db.delete(idempotencyKeys).where(eq(idempotencyKeys.id, id));
}
