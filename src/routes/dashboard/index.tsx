import { Hono } from "hono";
import { csrf } from "hono/csrf";
import { createMiddleware } from "hono/factory";
import { csrfTokenMatches, signOutOwner } from "../../domain/access/owner-sign-in";
import { ApiError } from "../../lib/api-error";
import { respondToPageError } from "../../middleware/error-responses";
import {
  endOwnerSession,
  ownerSessionOf,
  sessionTokenOf,
  signInCsrfToken,
  signInFromForm,
} from "../../middleware/owner-session";
import { renderPage, SignInForm } from "../../pages/page-shell";
import { account } from "./account";
import { actionPages } from "./actions";
import type { DashboardEnv } from "./dashboard-env";
import { intakePages } from "./intakes";
import { knowledgePages } from "./knowledge";
import { Layout } from "./layout";
import { overviewPage } from "./overview";
import { webhookPages } from "./webhooks";

function SignInPage(props: { csrfToken: string; error?: string; email?: string }) {
  return (
    <Layout title="Sign in">
      <section>
        <SignInForm action="/dashboard/sign-in" csrfToken={props.csrfToken} error={props.error} email={props.email} />
      </section>
    </Layout>
  );
}

/** Every page below needs the owner's session; without one, the sign-in page. */
const requireOwner = createMiddleware<DashboardEnv>(async (c, next) => {
  const session = await ownerSessionOf(c);
  if (!session) return c.redirect("/dashboard/sign-in", 303);
  c.set("session", session);
  // CSRF protection on every form: the session's token must come back with every POST (docs/architecture.md,
  // Sign-in).
  if (c.req.method === "POST" && !csrfTokenMatches(session.csrfToken, (await c.req.parseBody()).csrf_token)) {
    throw new ApiError(
      "forbidden",
      "This form was not sent from your dashboard, or it has expired. Nothing was changed.",
    );
  }
  await next();
});

const signedIn = new Hono<DashboardEnv>()
  .use(requireOwner)
  .route("/", overviewPage)
  .route("/", account)
  .route("/", actionPages)
  .route("/", intakePages)
  .route("/", knowledgePages)
  .route("/", webhookPages);

/**
 * The business owner's dashboard (docs/decisions.md, The owner's dashboard): server-rendered pages, the owner's
 * session, CSRF protection on every form (a token in the form, and the request's Origin must be ours), and errors as
 * pages, not JSON.
 */
export const dashboard = new Hono<DashboardEnv>()
  .use(csrf())
  .get("/sign-in", async (c) => {
    if (await ownerSessionOf(c)) return c.redirect("/dashboard", 303);
    return renderPage(c, 200, <SignInPage csrfToken={signInCsrfToken(c)} />);
  })
  .post("/sign-in", async (c) => {
    const outcome = await signInFromForm(c);
    if (!outcome.signedIn) {
      // The email comes back in the form (as the sign-in read it), the password never does.
      const again = <SignInPage csrfToken={signInCsrfToken(c)} error={outcome.error} email={outcome.email} />;
      return renderPage(c, outcome.status, again);
    }
    return c.redirect("/dashboard", 303);
  })
  .post("/sign-out", requireOwner, async (c) => {
    await signOutOwner(c.var.deps, sessionTokenOf(c));
    endOwnerSession(c);
    return c.redirect("/dashboard/sign-in", 303);
  })
  .route("/", signedIn)
  .onError(
    respondToPageError<DashboardEnv>((c, status, message) =>
      renderPage(
        c,
        status,
        <Layout title="That did not work" session={c.var.session}>
          <p class="error">{message}</p>
          <p>
            <a href="/dashboard">Back to the dashboard</a>
          </p>
        </Layout>,
      ),
    ),
  );
