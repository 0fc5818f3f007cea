import { DurableObject } from "cloudflare:workers";
import type { EpochMs } from "../lib/time";

/**
 * Failed sign-ins are counted per email address and per client address; past 10 failures for one email address in
 * 15 minutes, or 50 from one client address, sign-in is refused before any password is checked, so that passwords
 * cannot be guessed at speed (docs/architecture.md, Sign-in).
 */
export const SIGN_IN_FAILURE_LIMITS = { email: 10, address: 50 } as const;
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/** A sign-in reports its outcome within milliseconds; one that has not after a minute failed on the way: a failure. */
export const UNREPORTED_AFTER_MS = 60 * 1000;

/** What one object counts: the failures of one email address, or of one client address. */
export type ThrottledKey = keyof typeof SIGN_IN_FAILURE_LIMITS;

export type SignInAttempt = { allowed: true; attemptId: string } | { allowed: false; retryAfterSeconds: number };

/** How an allowed attempt ended: its password was wrong, right, or never checked (another count refused it). */
export type AttemptOutcome = "failed" | "succeeded" | "unchecked";

/**
 * One per email address and one per client address (docs/oauth.md, Sign-in throttling). Failures of the last 15
 * minutes are rows of its storage: a sliding window, which 10 failures at 14:59 and 10 at 15:00 cannot pass. An attempt
 * counts, pending in memory, before its password is checked, so simultaneous guesses cannot all pass; a success writes
 * nothing, and one unreported for a minute is a failure. Decisions run before the first await, so they are atomic.
 */
export class SignInThrottle extends DurableObject {
  /** Attempts let through whose outcome is not known yet: id → when it was let through. */
  private readonly pending = new Map<string, number>();

  /** The table, created on first use and again after the alarm has deleted the object's storage. */
  private failures() {
    const sql = this.ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS failures (at INTEGER NOT NULL)");
    return sql;
  }

  /**
   * Lets an attempt for `key` through, pending, unless its failures in the window ending at `now` (pending ones
   * counted as failures) reach the limit: then it answers how long until enough have left the window.
   */
  async attempt(key: ThrottledKey, now: EpochMs): Promise<SignInAttempt> {
    const limit = SIGN_IN_FAILURE_LIMITS[key];
    const sql = this.failures();
    let unreported = false;
    for (const [id, since] of this.pending) {
      if (since > now - UNREPORTED_AFTER_MS) continue;
      this.pending.delete(id);
      sql.exec("INSERT INTO failures (at) VALUES (?)", since);
      unreported = true;
    }
    sql.exec("DELETE FROM failures WHERE at <= ?", now - SIGN_IN_WINDOW_MS);
    const stored = sql.exec<{ at: number }>("SELECT at FROM failures").toArray();
    const counted = [...stored.map((row) => row.at), ...this.pending.values()];
    let answer: SignInAttempt;
    if (counted.length >= limit) {
      // The count falls below the limit when the (counted - limit + 1)-th oldest failure leaves the window.
      const freedAt = (counted.sort((a, b) => a - b)[counted.length - limit] ?? now) + SIGN_IN_WINDOW_MS;
      answer = { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((freedAt - now) / 1000)) };
    } else {
      answer = { allowed: true, attemptId: crypto.randomUUID() };
      this.pending.set(answer.attemptId, now);
    }
    if (unreported) await this.wakeToForget(now);
    return answer;
  }

  /**
   * Reports how an allowed attempt ended. A success clears an email address's count, never a client address's, so
   * that one account's owner cannot reset an address between guesses at others (docs/decisions.md, Security
   * hardening).
   */
  async settle(key: ThrottledKey, attemptId: string, outcome: AttemptOutcome, now: EpochMs) {
    this.pending.delete(attemptId);
    if (outcome === "failed") {
      this.failures().exec("INSERT INTO failures (at) VALUES (?)", now);
      await this.wakeToForget(now);
    } else if (outcome === "succeeded" && key === "email") {
      this.failures().exec("DELETE FROM failures");
    }
  }

  /** An alarm by the time a failure recorded at `at` leaves the window, unless one is set already. */
  private async wakeToForget(at: number) {
    if ((await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(at + SIGN_IN_WINDOW_MS);
  }

  /** Drops the failures that have left the window; once none is left, nothing of this key is kept. */
  override async alarm(): Promise<void> {
    const sql = this.failures();
    sql.exec("DELETE FROM failures WHERE at <= ?", Date.now() - SIGN_IN_WINDOW_MS);
    const newest = sql.exec<{ at: number | null }>("SELECT max(at) AS at FROM failures").one().at;
    if (newest === null) await this.ctx.storage.deleteAll();
    else await this.ctx.storage.setAlarm(newest + SIGN_IN_WINDOW_MS);
  }
}
