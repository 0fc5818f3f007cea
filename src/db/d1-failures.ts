/** Whether a D1 failure (as Drizzle wraps it, with the driver's error as its cause) says `text`. */
function failedWith(error: unknown, text: string): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current.message.includes(text)) return true;
  }
  return false;
}

/** A unique-key conflict. */
export const isUniqueViolation = (error: unknown) => failedWith(error, "UNIQUE constraint failed");

/** A batch aborted by `guard` (src/db/snapshot-guard.ts). */
export const isGuardAbort = (error: unknown) => failedWith(error, "snapshot changed concurrently");
