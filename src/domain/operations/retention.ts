import { and, lt, or, type SQL, sql } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { KEPT_MS as IDEMPOTENCY_KEPT_MS } from "../../admission/idempotency";
import { actionCalls, events, idempotencyKeys, oauthCodes, oauthTokens, ownerSessions } from "../../db/schema";
import { SANDBOX_SHARD } from "../../db/shards";
import type { Dependencies } from "../../dependencies";
import { type EpochMs, iso } from "../../lib/time";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Events, with their deliveries and attempts, are kept 30 days: as far back as `GET /events` and recover reach
 * (docs/decisions.md, Operations).
 */
export const EVENT_RETENTION_MS = 30 * DAY_MS;
/**
 * In the sandbox database, events and action calls are kept 3 days (docs/guides/sandbox.md, Budgets): test traffic,
 * which with the sandboxes' budgets and their number bounds that database's size.
 */
export const SANDBOX_RETENTION_MS = 3 * DAY_MS;
/**
 * Action calls are deleted after 30 days, except each action's 10 most recent, which `GET /actions/{id}` shows
 * (docs/decisions.md, Operations). The 10 are kept by the `superseded` mark (migration 0008's trigger): only a call
 * that has left its action's 10 most recent may go.
 */
export const ACTION_CALL_RETENTION_MS = 30 * DAY_MS;
/** Expired codes, sessions and idempotency records go a day after they expire (docs/decisions.md, Operations). */
export const EXPIRED_RECORD_RETENTION_MS = DAY_MS;
/** Revoked or expired OAuth tokens are deleted 90 days after they ended (docs/decisions.md, Operations). */
export const ENDED_TOKEN_RETENTION_MS = 90 * DAY_MS;
/**
 * How many rows of each kind one run deletes at most. The cron runs every minute and the next run takes the rest;
 * each kind is one short statement, so no run holds D1 for long.
 */
const RETENTION_CHUNK = 500;
/**
 * How many events one run deletes at most: fewer, as each takes its deliveries and their attempts with it (the
 * foreign keys' cascade), up to 140 more rows (20 deliveries of 6 attempts). 100 such events, 14,100 rows, held local
 * D1 for 14 ms, 500 for 99 ms (`npm run measure:rows`, docs/scaling.md); 100 a minute is 4.3 M a month, twice what
 * one database holds.
 */
export const EVENT_CHUNK = 100;

/** `DELETE FROM table WHERE rowid IN (the first `limit` rowids matching `due`, in `order`)`. */
function chunkDeletion(deps: Dependencies, table: SQLiteTable, due: SQL | undefined, limit: number, order?: SQL) {
  const { db } = deps;
  const chunk = db
    .select({ rowid: sql`rowid` })
    .from(table)
    .where(due)
    .orderBy(...(order ? [order] : []))
    .limit(limit);
  return db.delete(table).where(sql`rowid in ${chunk}`);
}

/**
 * The statements of one run, one per kind, each a range scan of an index of migration 0008
 * (test/operations/retention-chunks.test.ts proves the plans). Deleted records are gone for every principal and the
 * owner alike; intake responses are not among them: they stay until their intake is deleted (docs/intakes.md,
 * Responses).
 */
export function retentionDeletions(deps: Dependencies, now: EpochMs, limit = RETENTION_CHUNK) {
  const sandbox = deps.shard === SANDBOX_SHARD;
  const eventsBefore = iso(now - (sandbox ? SANDBOX_RETENTION_MS : EVENT_RETENTION_MS));
  const callsBefore = iso(now - (sandbox ? SANDBOX_RETENTION_MS : ACTION_CALL_RETENTION_MS));
  const expiredBefore = iso(now - EXPIRED_RECORD_RETENTION_MS);
  const endedBefore = iso(now - ENDED_TOKEN_RETENTION_MS);
  return {
    // The event's age decides for its deliveries and their attempts too (by the cascade): a delivery cannot outlive
    // its event (it shows it), and one created later for it (a redelivery, a recovery) goes with it.
    events: chunkDeletion(
      deps,
      events,
      lt(events.createdAt, eventsBefore),
      Math.min(limit, EVENT_CHUNK),
      sql`${events.createdAt}`,
    ),
    actionCalls: chunkDeletion(
      deps,
      actionCalls,
      // The literal, not a bound `true`: SQLite uses a partial index only for a condition it can see implies the
      // index's own.
      and(sql`${actionCalls.superseded} = 1`, lt(actionCalls.createdAt, callsBefore)),
      limit,
      sql`${actionCalls.createdAt}`,
    ),
    oauthCodes: chunkDeletion(deps, oauthCodes, lt(oauthCodes.expiresAt, expiredBefore), limit),
    ownerSessions: chunkDeletion(deps, ownerSessions, lt(ownerSessions.expiresAt, expiredBefore), limit),
    // A record counts as absent 24 hours after its creation (src/admission/idempotency.ts): that is when it expires.
    idempotencyKeys: chunkDeletion(
      deps,
      idempotencyKeys,
      lt(idempotencyKeys.createdAt, iso(now - IDEMPOTENCY_KEPT_MS - EXPIRED_RECORD_RETENTION_MS)),
      limit,
    ),
    // Refresh-token reuse detection (docs/decisions.md, Refresh tokens) needs rotated-out tokens: rotation neither
    // revokes nor expires a token, so one stays until 90 days past its own expiry; by then its successor, issued before
    // that expiry with 90 days to live, has expired too.
    oauthTokens: chunkDeletion(
      deps,
      oauthTokens,
      or(lt(oauthTokens.expiresAt, endedBefore), lt(oauthTokens.revokedAt, endedBefore)),
      limit,
    ),
  };
}

type RetentionKind = keyof ReturnType<typeof retentionDeletions>;

/**
 * One run of retention: each kind's chunk, one statement after the other (a kind that fails does not keep the
 * others from their run; the first failure is still thrown). Answers how many rows each kind's statement deleted,
 * as D1 counts them: an event's deliveries and attempts included.
 */
export async function applyRetention(
  deps: Dependencies,
  now: EpochMs = deps.clock(),
  limit = RETENTION_CHUNK,
): Promise<Record<RetentionKind, number>> {
  const deleted = {} as Record<RetentionKind, number>;
  const failures: unknown[] = [];
  for (const [kind, statement] of Object.entries(retentionDeletions(deps, now, limit))) {
    try {
      deleted[kind as RetentionKind] = (await statement.run()).meta.changes;
    } catch (error) {
      failures.push(error);
    }
  }
  if (failures.length > 0) throw failures[0];
  return deleted;
}
