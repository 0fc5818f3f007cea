import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { needsFreshSignIn, ownerPasswordMatches } from "../../domain/access/fresh-sign-in";
import { throttledPasswordCheck } from "../../middleware/owner-session";
import type { DashboardEnv } from "./dashboard-env";

/** Whether the session's sign-in is old enough that the form asks for the password (domain/access/fresh-sign-in.ts). */
export const asksPassword = (c: Context<DashboardEnv>) => needsFreshSignIn(c.var.session, c.var.deps.clock());

export type Refusal = { status: ContentfulStatusCode; error: string };

/**
 * Creating an API key and disconnecting an app, once the sign-in is 10 minutes old: undefined when the action may go
 * on (a fresh sign-in, or the right password), else the status and message of the page drawn again, and nothing is
 * done. The password is counted as a sign-in of the session's email from the client's address (SignInThrottle), so a
 * stolen session cookie is no faster way to guess the password than the sign-in page (docs/security.md, Owner
 * sessions and refresh tokens).
 */
export async function freshSignInRefusal(c: Context<DashboardEnv>, password: unknown): Promise<Refusal | undefined> {
  const { session, deps } = c.var;
  if (!asksPassword(c)) return undefined;
  if (typeof password !== "string" || password === "") {
    return { status: 401, error: "Enter your password to confirm: you signed in more than 10 minutes ago." };
  }
  const checked = await throttledPasswordCheck(
    c,
    session.email,
    () => ownerPasswordMatches(deps, session, password),
    (matches) => matches,
  );
  if ("locked" in checked) return { status: 429, error: `${checked.locked} Nothing was changed.` };
  return checked.result ? undefined : { status: 401, error: "The password is not correct. Nothing was changed." };
}

/** The password field of such a form, with the refusal's message when it comes back. */
export const PasswordField = (props: { error?: string }) => (
  <>
    {props.error && (
      <p class="error" role="alert" data-testid="password-error">
        {props.error}
      </p>
    )}
    <label for="password">Your password (you signed in more than 10 minutes ago)</label>
    <input id="password" name="password" type="password" autocomplete="current-password" required />
  </>
);
