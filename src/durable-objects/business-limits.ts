import { DurableObject } from "cloudflare:workers";
import type { EpochMs } from "../lib/time";

/** The answer of a counted use: whether it was allowed, and what the RateLimit fields and `Retry-After` say. */
export type WindowUse = {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix milliseconds at which the window ends and the count starts again. */
  resetAt: number;
  /** Whole seconds until then (at least 1). */
  resetInSeconds: number;
};

/**
 * One per business (`idFromName(businessId)`; docs/architecture.md, Shape): the per-business counters that must be
 * exact, such as 120 knowledge pushes a clock hour (docs/decisions.md, Knowledge and limits). Counts live in its
 * SQLite storage, surviving eviction; ended windows are deleted on use and by an alarm. `take` reads and writes before
 * any await, so the input gate makes each use atomic, however many requests arrive together.
 */
export class BusinessLimits extends DurableObject {
  constructor(ctx: DurableObjectState, env: Cloudflare.Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      `CREATE TABLE IF NOT EXISTS windows (
         name TEXT NOT NULL, window_end INTEGER NOT NULL, used INTEGER NOT NULL, PRIMARY KEY (name, window_end)
       )`,
    );
  }

  /** Counts one use of `name`, unless `limit` uses were already counted in the window of `windowMs` holding `now`. */
  async take(name: string, limit: number, windowMs: number, now: EpochMs): Promise<WindowUse> {
    const [use] = await this.takeEach([{ name, limit }], windowMs, now);
    return use as WindowUse;
  }

  /**
   * One use of several budgets at once, all or none: counted in each when every one has room, in none otherwise (a
   * use refused by one budget spends nothing of the others). Answers each budget's use, in the order given: the use
   * was counted when every `allowed` is true.
   */
  async takeEach(
    budgets: ReadonlyArray<{ name: string; limit: number }>,
    windowMs: number,
    now: EpochMs,
  ): Promise<WindowUse[]> {
    const sql = this.ctx.storage.sql;
    const resetAt = now - (now % windowMs) + windowMs;
    const resetInSeconds = Math.max(1, Math.ceil((resetAt - now) / 1000));
    sql.exec("DELETE FROM windows WHERE window_end <= ?", now);
    const used = budgets.map(
      ({ name }) =>
        sql
          .exec<{ used: number }>("SELECT used FROM windows WHERE name = ? AND window_end = ?", name, resetAt)
          .toArray()[0]?.used ?? 0,
    );
    // `allowed` is each budget's own answer; `remaining` counts this use only when every budget had room.
    const counted = budgets.every(({ limit }, i) => (used[i] ?? 0) < limit);
    const uses = budgets.map(({ limit }, i) => {
      const before = used[i] ?? 0;
      const remaining = Math.max(0, limit - before - (counted ? 1 : 0));
      return { allowed: before < limit, limit, remaining, resetAt, resetInSeconds };
    });
    if (!counted) return uses;
    for (const { name } of budgets) {
      sql.exec(
        "INSERT INTO windows (name, window_end, used) VALUES (?, ?, 1) ON CONFLICT (name, window_end) DO UPDATE SET used = used + 1",
        name,
        resetAt,
      );
    }
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > resetAt) await this.ctx.storage.setAlarm(resetAt);
    return uses;
  }

  /** At the end of a window: drop every ended window, and wake again at the end of the next one still held. */
  override async alarm(): Promise<void> {
    const sql = this.ctx.storage.sql;
    sql.exec("DELETE FROM windows WHERE window_end <= ?", Date.now());
    const next = sql.exec<{ next: number | null }>("SELECT min(window_end) AS next FROM windows").toArray()[0]?.next;
    if (next) await this.ctx.storage.setAlarm(next);
  }
}
