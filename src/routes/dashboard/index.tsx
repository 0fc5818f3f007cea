import { Hono } from "hono";
import { csrf } from "hono/csrf";
import { createMiddleware } from "hono/factory";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { database } from "../../db/client";
import { csrfTokenMatches, signInOwner, signOutOwner } from "../../domain/access/owner-sign-in";
import { ApiError } from "../../lib/errors";
import {
  endOwnerSession,
  ownerSessionOf,
  sessionTokenOf,
  signInCsrfToken,
  signInCsrfValid,
  startOwnerSession,
} from "../../middleware/owner-session";
import { account } from "./account";
import { actionPages } from "./actions";
import type { DashboardEnv } from "./dashboard-env";
import { intakePages } from "./intakes";
import { knowledgePages } from "./knowledge";
import { Layout, render } from "./layout";
import { webhookPages } from "./webhooks";

function SignInPage(props: { csrfToken: string; error?: string }) {
  return (
    <Layout title="Sign in">
      <section>
        {props.error && (
          <p class="error" role="alert">
            {props.error}
          </p>
        )}
        <form method="post" action="/dashboard/sign-in">
          <input type="hidden" name="csrf_token" value={props.csrfToken} />
          <label for="email">Email address</label>
          <input id="email" name="email" type="email" autocomplete="username" required />
          <label for="password">Password</label>
          <input id="password" name="password" type="password" autocomplete="current-password" required />
          <p>
            <button type="submit" class="primary">
              Sign in
            </button>
          </p>
        </form>
      </section>
    </Layout>
  );
}

/** Every page below needs the owner's session; without one, the sign-in page. */
const requireOwner = createMiddleware<DashboardEnv>(async (c, next) => {
  const session = await ownerSessionOf(c);
  if (!session) return c.redirect("/dashboard/sign-in", 303);
  c.set("session", session);
  // DESIGN.md: CSRF protection on every form: the session's token must come back with every POST.
  if (c.req.method === "POST" && !csrfTokenMatches(session.csrfToken, (await c.req.parseBody()).csrf_token)) {
    throw new ApiError(403, "This form was not sent from your dashboard, or it has expired. Nothing was changed.");
  }
  await next();
});

const signedIn = new Hono<DashboardEnv>()
  .use(requireOwner)
  .route("/", account)
  .route("/", actionPages)
  .route("/", intakePages)
  .route("/", knowledgePages)
  .route("/", webhookPages);

/**
 * The business owner's dashboard (DESIGN.md, Surfaces): server-rendered pages, the owner's session, CSRF protection
 * on every form (a token in the form, and the request's Origin must be ours), and errors as pages, not JSON.
 */
export const dashboard = new Hono<DashboardEnv>()
  .use(csrf())
  .get("/sign-in", async (c) => {
    if (await ownerSessionOf(c)) return c.redirect("/dashboard", 303);
    return render(c, 200, <SignInPage csrfToken={signInCsrfToken(c)} />);
  })
  .post("/sign-in", async (c) => {
    const body = await c.req.parseBody();
    if (!signInCsrfValid(c, body.csrf_token)) {
      return render(
        c,
        403,
        <SignInPage csrfToken={signInCsrfToken(c)} error="The form expired. Please sign in again." />,
      );
    }
    const result = await signInOwner(database(c.env.DB), {
      email: typeof body.email === "string" ? body.email : "",
      password: typeof body.password === "string" ? body.password : "",
    });
    if (!result) {
      return render(
        c,
        401,
        <SignInPage csrfToken={signInCsrfToken(c)} error="The email address or password is not correct." />,
      );
    }
    startOwnerSession(c, result.token);
    return c.redirect("/dashboard", 303);
  })
  .post("/sign-out", requireOwner, async (c) => {
    await signOutOwner(database(c.env.DB), sessionTokenOf(c));
    endOwnerSession(c);
    return c.redirect("/dashboard/sign-in", 303);
  })
  .route("/", signedIn)
  .onError((error, c) => {
    if (!(error instanceof ApiError) && !(error instanceof Error && "status" in error)) throw error;
    const status = (
      error instanceof ApiError ? error.status : (error as { status: number }).status
    ) as ContentfulStatusCode;
    return render(
      c,
      status,
      <Layout title="That did not work" session={c.var.session}>
        <p class="error">{error.message}</p>
        <p>
          <a href="/dashboard">Back to the dashboard</a>
        </p>
      </Layout>,
    );
  });
