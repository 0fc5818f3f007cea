/** A stored ISO time as the owner reads it: date and time to the minute, in UTC as stored. */
export const minuteText = (at: string) => `${at.replace("T", " ").slice(0, 16)} UTC`;

/**
 * When a key or an app was last used (recorded at most once an hour per credential, so to the hour at best);
 * "never" when no request has used it yet.
 */
export const lastUsedText = (at: string | null) => (at === null ? "never" : minuteText(at));
