/**
 * Time as the service injects it: milliseconds since the epoch, as `Date.now()` answers. A function whose rules
 * depend on the time takes `now: EpochMs = Date.now()`, so that tests pass another instant instead of waiting; the
 * queue consumer, which also measures how long an attempt took, takes a `Clock` answering the same unit.
 */
export type EpochMs = number;
export type Clock = () => EpochMs;

/** Timestamps of the API: ISO 8601 UTC with milliseconds (spec: Conventions). */
export const iso = (at: EpochMs): string => new Date(at).toISOString();

export const isoNow = (): string => iso(Date.now());

export const HOUR_MS = 3_600_000;
