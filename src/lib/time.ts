/**
 * Time as the service injects it: milliseconds since the epoch, from the unit of work's `deps.clock` (src/dependencies.ts).
 * A rule that depends on the time takes `now` from its caller, so that tests drive the clock instead of waiting.
 */
export type EpochMs = number;
export type Clock = () => EpochMs;

/** Timestamps of the API: ISO 8601 UTC with milliseconds (docs/guides/getting-started.md, Where to send requests). */
export const iso = (at: EpochMs): string => new Date(at).toISOString();

export const isoNow = (): string => iso(Date.now());

export const HOUR_MS = 3_600_000;
