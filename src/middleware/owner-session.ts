import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { businessMoving } from "../domain/access/business-moving";
import {
  csrfTokenMatches,
  findOwnerSession,
  MAX_EMAIL_LENGTH,
  newSignInCsrfToken,
  normaliseEmail,
  recordSessionUse,
  SESSION_LIFETIME_MS,
  sessionUseToRecord,
  shardOfSessionToken,
  shardToSignIn,
  signInOwner,
} from "../domain/access/owner-sign-in";
import type { AttemptOutcome, ThrottledKey } from "../durable-objects/sign-in-throttle";
import type { Env } from "../env";
import { ApiError } from "../lib/api-error";
import { clientAddressOf } from "../lib/client-address";
import { loggableError } from "../lib/loggable-error";
import type { Clock } from "../lib/time";
import { useShard } from "./request-dependencies";

/**
 * The owner's browser session, shared by the dashboard and the OAuth consent page: HttpOnly, Secure, SameSite
 * cookies holding a random token that D1 stores only as its hash (docs/architecture.md, Sign-in). `prefix: "host"`
 * makes them `__Host-` cookies: Secure, Path=/, no Domain, so a sibling subdomain cannot plant one. SameSite=Lax lets
 * the session arrive with an app's top-level redirect to the consent page, and keeps it off cross-site form posts.
 */
const SESSION_COOKIE = "owner_session";
/** The sign-in form's CSRF token before any session exists: a double-submit cookie. */
const SIGN_IN_CSRF_COOKIE = "sign_in_csrf";
const SIGN_IN_CSRF_MAX_AGE = 60 * 60;

/** Any Hono context of this Worker (the dashboard's carries the session as well). */
// biome-ignore lint/suspicious/noExplicitAny: the variables differ between surfaces; only the bindings are read.
type AnyContext = Context<{ Bindings: Env; Variables: any }>;

const cookieOptions = (maxAge: number) =>
  ({ prefix: "host", httpOnly: true, secure: true, sameSite: "Lax", path: "/", maxAge }) as const;

export const sessionTokenOf = (c: AnyContext) => getCookie(c, SESSION_COOKIE, "host");

/**
 * The owner's live session, or undefined. Its token names its shard, where the rest of the request runs
 * (docs/scaling.md, How a request finds its shard); one naming none of ours costs no query. While the business moves,
 * a form that would change it is a 503 (docs/scaling.md, Moving a business between shards). Its use is recorded after
 * the answer, at most every few minutes, for the idle timeout (owner-sign-in.ts), and not during a move.
 */
export async function ownerSessionOf(c: AnyContext) {
  const token = sessionTokenOf(c);
  const shard = shardOfSessionToken(token);
  if (shard === undefined) return undefined;
  useShard(c, shard);
  const { deps } = c.var;
  const now = deps.clock();
  const session = await findOwnerSession(deps, token, now);
  if (session?.business.movingSince != null && c.req.method !== "GET" && c.req.method !== "HEAD") {
    throw businessMoving();
  }
  if (session?.business.movingSince === null && sessionUseToRecord(session, now)) {
    const logged = (error: Error) =>
      console.error(JSON.stringify({ level: "error", step: "record session use", ...loggableError(error) }));
    c.executionCtx.waitUntil(recordSessionUse(deps, session, now).catch(logged));
  }
  return session;
}

export function startOwnerSession(c: AnyContext, token: string) {
  setCookie(c, SESSION_COOKIE, token, cookieOptions(Math.floor(SESSION_LIFETIME_MS / 1000)));
  deleteCookie(c, SIGN_IN_CSRF_COOKIE, cookieOptions(0));
}

export function endOwnerSession(c: AnyContext) {
  deleteCookie(c, SESSION_COOKIE, cookieOptions(0));
}

/** The sign-in form's token: the browser's own when it has a well-formed one (two open tabs do not undo each other). */
export function signInCsrfToken(c: AnyContext): string {
  const existing = getCookie(c, SIGN_IN_CSRF_COOKIE, "host");
  const token = existing && /^[A-Za-z0-9_-]{43}$/.test(existing) ? existing : newSignInCsrfToken();
  setCookie(c, SIGN_IN_CSRF_COOKIE, token, cookieOptions(SIGN_IN_CSRF_MAX_AGE));
  return token;
}

export const signInCsrfValid = (c: AnyContext, submitted: unknown) =>
  csrfTokenMatches(getCookie(c, SIGN_IN_CSRF_COOKIE, "host"), submitted);

const throttleOf = (env: Env, key: ThrottledKey, name: string) => ({
  key,
  stub: env.SIGN_IN_THROTTLE.get(env.SIGN_IN_THROTTLE.idFromName(`${key}:${name}`)),
});

/**
 * The counts a sign-in passes (docs/architecture.md, Sign-in): its email address, normalised as sign-in
 * compares it, when it could be an account's (no object for an empty or oversized one), and the client's address.
 */
function throttlesOf(c: AnyContext, email: string) {
  const normalised = normaliseEmail(email);
  const address = clientAddressOf(c);
  return [
    ...(normalised.length > 0 && normalised.length <= MAX_EMAIL_LENGTH ? [throttleOf(c.env, "email", normalised)] : []),
    ...(address === undefined ? [] : [throttleOf(c.env, "address", address)]),
  ];
}

const tryAgainLater = (seconds: number) => {
  const minutes = Math.ceil(seconds / 60);
  return `Too many sign-in attempts have failed. Please try again later, in ${minutes === 1 ? "a minute" : `${minutes} minutes`}.`;
};

/**
 * A password check behind the failure counts of `email` and the client's address: `check` runs unless a count is
 * locked, then `passed` tells how it ended. Each attempt counts before its password is checked (SignInThrottle says
 * why), so a locked email or client address costs no PBKDF2; a locked one answers the 429's message, with
 * `Retry-After`. A success clears the email's count but not the client address's: whoever owns one account cannot
 * sign into it between guesses at others to reset the address's count.
 */
export async function throttledPasswordCheck<T>(
  c: AnyContext,
  email: string,
  check: () => Promise<T>,
  passed: (result: T) => boolean,
): Promise<{ result: T } | { locked: string }> {
  const throttles = throttlesOf(c, email);
  const clock: Clock = c.var.globalDeps.clock;
  const attempts = await Promise.all(throttles.map(({ key, stub }) => stub.attempt(key, clock())));
  /** Reports the outcome to every count that let the attempt through. */
  const settle = (outcome: AttemptOutcome) =>
    Promise.all(
      throttles.map(({ key, stub }, i) => {
        const attempt = attempts[i];
        return attempt?.allowed ? stub.settle(key, attempt.attemptId, outcome, clock()) : undefined;
      }),
    );
  const waits = attempts.flatMap((attempt) => (attempt.allowed ? [] : [attempt.retryAfterSeconds]));
  if (waits.length > 0) {
    c.executionCtx.waitUntil(settle("unchecked"));
    const retryAfter = Math.max(...waits);
    c.header("Retry-After", String(retryAfter));
    return { locked: tryAgainLater(retryAfter) };
  }
  const result = await check();
  // The answer need not wait for the report: until it lands, the attempt counts as pending, which is a failure.
  c.executionCtx.waitUntil(settle(passed(result) ? "succeeded" : "failed"));
  return { result };
}

/**
 * A sign-in that did not start a session (401, 403, 429, or 503 while the business moves) carries the `email` that
 * was sent ("" when it was not text), to draw the form again with it.
 */
export type SignInOutcome =
  | { signedIn: true }
  | { signedIn: false; status: ContentfulStatusCode; error: string; email: string };

/**
 * The one sign-in flow of the dashboard and the consent page: the form's double-submit CSRF token, then the failure
 * counts, then the email and password (never saying which was wrong); on success the session cookie is set. The
 * caller shows its own page; a 429 or a 503 carries `Retry-After`.
 */
export async function signInFromForm(c: AnyContext): Promise<SignInOutcome> {
  const body = await c.req.parseBody();
  const text = (value: unknown) => (typeof value === "string" ? value : "");
  const credentials = { email: text(body.email), password: text(body.password) };
  const { email } = credentials;
  if (!signInCsrfValid(c, body.csrf_token)) {
    return { signedIn: false, status: 403, error: "The form expired. Please sign in again.", email };
  }
  const checked = await throttledPasswordCheck(
    c,
    email,
    async () => {
      // The owner's email names their business's shard (docs/scaling.md, Sign-in): the session is checked and stored
      // there.
      useShard(c, await shardToSignIn(c.var.globalDeps, email));
      return signInOwner(c.var.deps, credentials).catch((error: unknown) => {
        // The password was right, but the business is being moved (docs/scaling.md, Moving a business between
        // shards): the form comes back with the refusal and its Retry-After, and the attempt counts as the success it
        // was.
        if (error instanceof ApiError && error.code === "temporarily_unavailable") return error;
        throw error;
      });
    },
    (result) => result !== undefined,
  );
  if ("locked" in checked) return { signedIn: false, status: 429, error: checked.locked, email };
  const { result } = checked;
  if (!result) return { signedIn: false, status: 401, error: "The email address or password is not correct.", email };
  if (result instanceof ApiError) {
    for (const [name, value] of result.options.headers ?? []) c.header(name, value);
    return { signedIn: false, status: result.status, error: result.message, email };
  }
  startOwnerSession(c, result.token);
  return { signedIn: true };
}
