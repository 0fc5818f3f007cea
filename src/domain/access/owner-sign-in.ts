import { and, eq, lte } from "drizzle-orm";
import { businesses, ownerSessions, owners } from "../../db/schema";
import type { Dependencies } from "../../dependencies";
import { verifyPassword } from "../../lib/password";
import { randomToken, secretsEqual, sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import type { Business } from "./businesses";

/**
 * Owner sign-in: email and password, PBKDF2 through WebCrypto, sessions as random tokens stored hashed in D1, and a
 * CSRF token on every form (docs/architecture.md, Sign-in). The dashboard and the OAuth consent page both sign in
 * through it.
 */

/** A session lasts 12 hours from sign-in, then the owner signs in again. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

/** Session tokens and CSRF tokens: 32 random bytes in base64url, 43 characters. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** Bounds that keep a hostile form from making PBKDF2 hash megabytes. */
export const MAX_EMAIL_LENGTH = 254;
export const MAX_PASSWORD_LENGTH = 1024;

export type OwnerSession = {
  sessionId: number;
  ownerId: number;
  email: string;
  /** The session's CSRF token: every form of a signed-in page carries it (synchronizer token pattern). */
  csrfToken: string;
  expiresAt: string;
  business: Business;
};

/** Emails are compared as stored, trimmed and in lower case (the seed stores them so). */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/**
 * Signs an owner in: answers the new session and its token (for the cookie; only its SHA-256 is stored), or
 * undefined when the email or password is wrong, without saying which. An unknown email still costs a full PBKDF2
 * (lib/password.ts), so the answer time does not reveal which addresses have an account. Each sign-in starts a
 * new session (no session fixation) and clears the owner's expired ones.
 */
export async function signInOwner(
  deps: Dependencies,
  credentials: { email: string; password: string },
  now: EpochMs = deps.clock(),
): Promise<{ token: string; session: OwnerSession } | undefined> {
  const { db } = deps;
  const email = normaliseEmail(credentials.email);
  const { password } = credentials;
  const row =
    email.length > 0 && email.length <= MAX_EMAIL_LENGTH
      ? await db
          .select({ owner: owners, business: businesses })
          .from(owners)
          .innerJoin(businesses, eq(businesses.id, owners.businessId))
          .where(eq(owners.email, email))
          .get()
      : undefined;
  const matches = password.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(password, row?.owner.passwordHash));
  if (!row || !matches) return undefined;

  const token = randomToken("");
  const csrfToken = randomToken("");
  const expiresAt = iso(now + SESSION_LIFETIME_MS);
  const [, inserted] = await db.batch([
    db
      .delete(ownerSessions)
      .where(and(eq(ownerSessions.ownerId, row.owner.id), lte(ownerSessions.expiresAt, iso(now)))),
    db
      .insert(ownerSessions)
      .values({
        ownerId: row.owner.id,
        tokenHash: sha256Hex(token),
        csrfSecret: csrfToken,
        createdAt: iso(now),
        expiresAt,
      })
      .returning({ id: ownerSessions.id }),
  ]);
  const sessionId = inserted[0]?.id;
  if (sessionId === undefined) throw new Error("The session was not stored.");
  return {
    token,
    session: { sessionId, ownerId: row.owner.id, email: row.owner.email, csrfToken, expiresAt, business: row.business },
  };
}

/** The live session of a cookie's token, with the owner's business (one query), or undefined. */
export async function findOwnerSession(
  deps: Dependencies,
  token: string | undefined,
  now: EpochMs = deps.clock(),
): Promise<OwnerSession | undefined> {
  if (!token || !TOKEN_PATTERN.test(token)) return undefined;
  const row = await deps.db
    .select({ session: ownerSessions, email: owners.email, business: businesses })
    .from(ownerSessions)
    .innerJoin(owners, eq(owners.id, ownerSessions.ownerId))
    .innerJoin(businesses, eq(businesses.id, owners.businessId))
    .where(eq(ownerSessions.tokenHash, sha256Hex(token)))
    .get();
  if (!row || row.session.expiresAt <= iso(now)) return undefined;
  return {
    sessionId: row.session.id,
    ownerId: row.session.ownerId,
    email: row.email,
    csrfToken: row.session.csrfSecret,
    expiresAt: row.session.expiresAt,
    business: row.business,
  };
}

/** Ends the session of a cookie's token (signing out); an unknown token is nothing to do. */
export async function signOutOwner(deps: Dependencies, token: string | undefined): Promise<void> {
  if (!token || !TOKEN_PATTERN.test(token)) return;
  await deps.db.delete(ownerSessions).where(eq(ownerSessions.tokenHash, sha256Hex(token)));
}

/** A fresh random token for the sign-in form's double-submit cookie (there is no session yet to bind it to). */
export const newSignInCsrfToken = () => randomToken("");

/** Whether a form's CSRF token is the expected one, compared in constant time. */
export function csrfTokenMatches(expected: string | undefined, submitted: unknown): boolean {
  if (!expected || typeof submitted !== "string" || !TOKEN_PATTERN.test(submitted)) return false;
  return secretsEqual(expected, submitted);
}
