import { and, eq, isNull, lte, or } from "drizzle-orm";
import { businesses, ownerSessions, owners } from "../../db/schema";
import { LEGACY_SHARD, type ShardName, shardOfSecret, shardSegment } from "../../db/shards";
import type { Dependencies, GlobalDependencies } from "../../dependencies";
import { verifyPassword } from "../../lib/password";
import { secretsEqual } from "../../lib/secret-comparison";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { businessMoving } from "./business-moving";
import type { Business } from "./businesses";
import { shardOfOwnerEmail } from "./directory";

/**
 * Owner sign-in: email and password, PBKDF2 through WebCrypto, sessions as random tokens stored hashed in D1, and a
 * CSRF token on every form (docs/architecture.md, Sign-in). The dashboard and the OAuth consent page both sign in
 * through it.
 */

/** A session lasts 12 hours from sign-in, then the owner signs in again. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

/**
 * Within those 12 hours, a session unused for 30 minutes ends as an expired one does, so a dashboard left open on a
 * shared computer does not stay signed in (docs/architecture.md, Sign-in).
 */
export const SESSION_IDLE_MS = 30 * 60 * 1000;

/**
 * A session's use is recorded at most every 5 minutes, as a key's is to the hour (last-use.ts): a page view costs no
 * write. The idle time counts from the recorded use, so a session ends 25 to 30 minutes after its last request.
 */
export const SESSION_USE_PRECISION_MS = 5 * 60 * 1000;

/** CSRF tokens: 32 random bytes in base64url, 43 characters. */
const CSRF_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * A session token is the business's shard and `_`, then 32 random bytes in base64url, like every secret of a business
 * (src/db/shards.ts): the cookie names the database its session is in (docs/scaling.md, Sign-in). A legacy session's
 * names none, as before sharding, so sessions issued then keep working.
 */
const SESSION_TOKEN_PREFIX = "";

/** The shard a session token names, or undefined for a token that is not one of ours: no session. */
export const shardOfSessionToken = (token: string | undefined): ShardName | undefined =>
  token === undefined ? undefined : shardOfSecret(SESSION_TOKEN_PREFIX, token);

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
  /** The sign-in that started the session (fresh-sign-in.ts). */
  signedInAt: string;
  /** The last recorded use (`SESSION_USE_PRECISION_MS`), or the sign-in before the first record. */
  lastUsedAt: string;
  business: Business;
};

/** Emails are compared as stored, trimmed and in lower case (the seed stores them so). */
export const normaliseEmail = (email: string) => email.trim().toLowerCase();

/** An email that could be an account's: no query is spent on an empty or oversized one. */
const couldBeAnAccount = (email: string) => email.length > 0 && email.length <= MAX_EMAIL_LENGTH;

/**
 * The shard whose owners a sign-in with `email` is checked against: the directory's for the email, read in the global
 * database (docs/scaling.md, Sign-in); the legacy shard for an email it does not list. Known or not, an email that
 * could be an account's costs this one read, then `signInOwner`'s own, so the answer time still reveals no account.
 */
export async function shardToSignIn(deps: GlobalDependencies, email: string): Promise<ShardName> {
  const normalised = normaliseEmail(email);
  return couldBeAnAccount(normalised) ? shardOfOwnerEmail(deps.global, normalised) : LEGACY_SHARD;
}

/**
 * Signs an owner in against the owners of `deps.shard` (the one `shardToSignIn` names): answers the new session and
 * its token (for the cookie; only its SHA-256 is stored, in that shard), or undefined when the email or password is
 * wrong, without saying which. An unknown email still costs a full PBKDF2 (lib/password.ts), so the answer time does
 * not reveal which addresses have an account. Each sign-in starts a new session (no session fixation) and clears the
 * owner's expired ones.
 */
export async function signInOwner(
  deps: Dependencies,
  credentials: { email: string; password: string },
  now: EpochMs = deps.clock(),
): Promise<{ token: string; session: OwnerSession } | undefined> {
  const { db } = deps;
  const email = normaliseEmail(credentials.email);
  const { password } = credentials;
  const row = couldBeAnAccount(email)
    ? await db
        .select({ owner: owners, business: businesses })
        .from(owners)
        .innerJoin(businesses, eq(businesses.id, owners.businessId))
        .where(eq(owners.email, email))
        .get()
    : undefined;
  const matches = password.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(password, row?.owner.passwordHash));
  if (!row || !matches) return undefined;
  // The session would be written in the shard the business is being copied from, and left behind by the move
  // (docs/scaling.md, Moving a business between shards): the owner signs in once it has ended.
  if (row.business.movingSince !== null) throw businessMoving();

  const token = randomToken(SESSION_TOKEN_PREFIX + shardSegment(deps.shard));
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
    // Kept past the session's retention: a sandbox business unused for 30 days goes (docs/decisions.md, Sandbox
    // businesses), and a sign-in is a use.
    db
      .update(owners)
      .set({ lastSignedInAt: iso(now) })
      .where(eq(owners.id, row.owner.id)),
  ]);
  const sessionId = inserted[0]?.id;
  if (sessionId === undefined) throw new Error("The session was not stored.");
  return {
    token,
    session: {
      sessionId,
      ownerId: row.owner.id,
      email: row.owner.email,
      csrfToken,
      expiresAt,
      signedInAt: iso(now),
      lastUsedAt: iso(now),
      business: row.business,
    },
  };
}

/**
 * Whether `token` is a session token of `deps.shard`: a session is only ever looked up, or ended, in the shard its
 * token names, so a token that names another (or none of ours) costs no query.
 */
const inThisShard = (deps: Dependencies, token: string | undefined): token is string =>
  shardOfSessionToken(token) === deps.shard;

/**
 * The live session of a cookie's token, with the owner's business (one query), or undefined: none past its 12 hours,
 * or unused for `SESSION_IDLE_MS`.
 */
export async function findOwnerSession(
  deps: Dependencies,
  token: string | undefined,
  now: EpochMs = deps.clock(),
): Promise<OwnerSession | undefined> {
  if (!inThisShard(deps, token)) return undefined;
  const row = await deps.db
    .select({ session: ownerSessions, email: owners.email, business: businesses })
    .from(ownerSessions)
    .innerJoin(owners, eq(owners.id, ownerSessions.ownerId))
    .innerJoin(businesses, eq(businesses.id, owners.businessId))
    .where(eq(ownerSessions.tokenHash, sha256Hex(token)))
    .get();
  if (!row) return undefined;
  const { session } = row;
  const lastUsedAt = session.lastUsedAt ?? session.createdAt;
  if (session.expiresAt <= iso(now) || lastUsedAt <= iso(now - SESSION_IDLE_MS)) return undefined;
  return {
    sessionId: session.id,
    ownerId: session.ownerId,
    email: row.email,
    csrfToken: session.csrfSecret,
    expiresAt: session.expiresAt,
    signedInAt: session.createdAt,
    lastUsedAt,
    business: row.business,
  };
}

/** Whether this request should record the session's use: last recorded, or signed in, 5 minutes ago or more. */
export const sessionUseToRecord = (session: OwnerSession, now: EpochMs): boolean =>
  session.lastUsedAt <= iso(now - SESSION_USE_PRECISION_MS);

/** Records the session's use; conditional, so that concurrent requests of one session write it once. */
export async function recordSessionUse(deps: Dependencies, session: OwnerSession, now: EpochMs): Promise<void> {
  const { lastUsedAt, id } = ownerSessions;
  await deps.db
    .update(ownerSessions)
    .set({ lastUsedAt: iso(now) })
    .where(
      and(eq(id, session.sessionId), or(isNull(lastUsedAt), lte(lastUsedAt, iso(now - SESSION_USE_PRECISION_MS)))),
    );
}

/** Ends the session of a cookie's token (signing out); an unknown token is nothing to do. */
export async function signOutOwner(deps: Dependencies, token: string | undefined): Promise<void> {
  if (!inThisShard(deps, token)) return;
  await deps.db.delete(ownerSessions).where(eq(ownerSessions.tokenHash, sha256Hex(token)));
}

/** A fresh random token for the sign-in form's double-submit cookie (there is no session yet to bind it to). */
export const newSignInCsrfToken = () => randomToken("");

/** Whether a form's CSRF token is the expected one, compared in constant time. */
export function csrfTokenMatches(expected: string | undefined, submitted: unknown): boolean {
  if (!expected || typeof submitted !== "string" || !CSRF_TOKEN_PATTERN.test(submitted)) return false;
  return secretsEqual(expected, submitted);
}
