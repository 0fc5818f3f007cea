/** Timestamps of the API: ISO 8601 UTC with milliseconds (spec: Conventions). */
export const isoNow = (): string => new Date().toISOString();
