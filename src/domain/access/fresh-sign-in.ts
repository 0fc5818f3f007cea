import { eq } from "drizzle-orm";
import { owners } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { verifyPassword } from "../../lib/password";
import { type EpochMs, iso } from "../../lib/time";
import { MAX_PASSWORD_LENGTH, type OwnerSession } from "./owner-sign-in";

/**
 * Creating an API key (it hands out the business's data) and disconnecting an app (it stops an integration) ask for
 * the owner's password again once the session's sign-in is 10 minutes old: a session cookie taken from a browser is
 * then not enough for either (docs/security.md, Owner sessions and refresh tokens). Revoking a key only takes access
 * away, and asks nothing.
 */
export const FRESH_SIGN_IN_MS = 10 * 60 * 1000;

/** Whether the session's sign-in is too old for a key's creation or an app's disconnection without the password. */
export const needsFreshSignIn = (session: OwnerSession, now: EpochMs): boolean =>
  session.signedInAt <= iso(now - FRESH_SIGN_IN_MS);

/**
 * Whether `password` is the session owner's, by a full PBKDF2 (lib/password.ts); an oversized one is wrong without
 * hashing. The caller counts it as a sign-in attempt (middleware/owner-session.ts), so it is no faster way to guess.
 */
export async function ownerPasswordMatches(deps: Dependencies, session: OwnerSession, password: string) {
  if (password.length > MAX_PASSWORD_LENGTH) return false;
  const owner = await deps.db
    .select({ passwordHash: owners.passwordHash })
    .from(owners)
    .where(eq(owners.id, session.ownerId))
    .get();
  return verifyPassword(password, owner?.passwordHash);
}
