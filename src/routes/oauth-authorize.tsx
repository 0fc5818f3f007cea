import { type Context, Hono } from "hono";
import { csrf } from "hono/csrf";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../app-env";
import { csrfTokenMatches, signOutOwner } from "../domain/access/owner-sign-in";
import {
  type AuthorizationRequest,
  approveAuthorization,
  authorizationQuery,
  checkAuthorizationRequest,
  connectionRefusal,
  refuseAuthorization,
} from "../domain/oauth/authorization";
import { oauthIssuer } from "../domain/oauth/discovery";
import { creatorNetworkOf } from "../lib/client-address";
import { outboundPolicy } from "../lib/outbound";
import { respondToPageError } from "../middleware/error-responses";
import {
  endOwnerSession,
  ownerSessionOf,
  sessionTokenOf,
  signInCsrfToken,
  signInFromForm,
} from "../middleware/owner-session";
import { ConsentPage, ErrorPage, PlanPage, SignInPage } from "../pages/oauth-pages";
import { renderPage } from "../pages/page-shell";

/**
 * The authorization page (RFC 6749 §4.1; docs/guides/oauth.md, 2. Send the owner to the authorization page): GET
 * shows sign-in or consent; POST `/sign-in` sets the session, POST approves or refuses (303 to the app), POST
 * `/sign-out` ends the session. Server-rendered, no script; the rules live in the domain. Every POST checks the
 * request in its query again; the consent POST must come from our own page (`sameOriginForm`).
 */

/**
 * A page of this flow, which cannot be framed (RFC 9700 §4.16; docs/architecture.md, OAuth), with the headers of
 * every page; a page whose form leads back to the app lets the form's redirect go to the app's origin.
 */
const page = (c: Context<AppEnv>, status: ContentfulStatusCode, body: Child, formRedirectUri?: string) =>
  renderPage(c, status, body, formRedirectUri ? new URL(formRedirectUri).origin : undefined);

/**
 * The authorization request of the URL, checked; an invalid one is answered at once with an error page, never a
 * redirect to the app (RFC 9700 §4.11.2: see checkAuthorizationRequest), whether or not the owner is signed in. One
 * for another resource offers a link back to the app, with `error=invalid_target` (RFC 8707 §2).
 */
async function checkedRequest(c: Context<AppEnv>) {
  // An app's metadata document is read under the outbound rules, each reading counted as a registration from the
  // owner's address (docs/oauth.md, Client ID metadata documents).
  const reading = {
    outbound: outboundPolicy(c.env),
    limiter: c.env.REGISTRATION_RATE_LIMIT,
    clientAddress: creatorNetworkOf(c),
  };
  const check = await checkAuthorizationRequest(c.var.globalDeps, new URL(c.req.url).searchParams, reading);
  if (check.outcome === "valid") return { request: check.request };
  const back = check.outcome === "invalid_target" ? check.location : undefined;
  return {
    response: page(c, 400, <ErrorPage title="This sign-in link is not valid" message={check.message} back={back} />),
  };
}

/** Back to the GET, which shows whatever fits now (303 after a POST: RFC 9700 §4.12; docs/architecture.md, OAuth). */
const backToAuthorize = (c: Context<AppEnv>, request: AuthorizationRequest) =>
  c.redirect(`/oauth/authorize?${authorizationQuery(request)}`, 303);

function signInPage(
  c: Context<AppEnv>,
  request: AuthorizationRequest,
  status: ContentfulStatusCode,
  error?: string,
  email?: string,
) {
  // Reuse the browser's token when it has a well-formed one, so that two open tabs do not undo each other.
  const csrfToken = signInCsrfToken(c);
  return page(
    c,
    status,
    <SignInPage request={request} serviceName={c.env.SERVICE_NAME} csrfToken={csrfToken} error={error} email={email} />,
  );
}

const formField = (body: Record<string, unknown>, name: string) =>
  typeof body[name] === "string" ? (body[name] as string) : undefined;

const forgedForm = (c: Context<AppEnv>, request: AuthorizationRequest) =>
  page(
    c,
    403,
    <ErrorPage
      title="This form has expired"
      message="The form was not sent from this page, or it has expired. Nothing was changed."
      retry={`/oauth/authorize?${authorizationQuery(request)}`}
    />,
  );

/** Back to the GET of the same request, for a page that offers to start again. */
const startAgain = (c: Context<AppEnv>) => `/oauth/authorize${new URL(c.req.url).search}`;

/**
 * An error page's title. A 503 refuses for now, not for good: the business is being moved and the owner's approval
 * would be left behind by the move (docs/scaling.md, Moving a business between shards), so the owner tries again.
 */
const errorTitle = (status: ContentfulStatusCode) => {
  if (status === 503) return "Please try again in a minute";
  return status >= 500 ? "Something failed" : "That did not work";
};

const checkOrigin = csrf();

/**
 * The consent form must come from this service's own page, by the dashboard's rule (`hono/csrf`, as
 * routes/dashboard/index.tsx): `Sec-Fetch-Site: same-origin` or an `Origin` that is ours; a form with neither is
 * refused, as it is there. With the session's CSRF token, a forged approval needs both. Checked before the request
 * is read: another site's form learns nothing of it.
 */
const sameOriginForm = createMiddleware<AppEnv>(async (c, next) => {
  try {
    await checkOrigin(c, async () => {});
  } catch (err) {
    if (!(err instanceof HTTPException)) throw err;
    return page(
      c,
      403,
      <ErrorPage
        title="This form has expired"
        message="The form was not sent from this page, or it has expired. Nothing was changed."
        retry={startAgain(c)}
      />,
    );
  }
  await next();
});

export const oauthAuthorize = new Hono<AppEnv>()
  .get("/authorize", async (c) => {
    const { request, response } = await checkedRequest(c);
    if (!request) return response;
    const session = await ownerSessionOf(c);
    if (!session) return signInPage(c, request, 200);
    const refusal = connectionRefusal(session.business);
    if (refusal) {
      return page(c, 403, <PlanPage request={request} session={session} message={refusal} />, request.redirectUri);
    }
    return page(c, 200, <ConsentPage request={request} session={session} />, request.redirectUri);
  })
  .post("/authorize/sign-in", async (c) => {
    const { request, response } = await checkedRequest(c);
    if (!request) return response;
    const outcome = await signInFromForm(c);
    if (!outcome.signedIn) {
      // The form keeps the email that was sent (as the sign-in read it), never the password.
      return signInPage(c, request, outcome.status, outcome.error, outcome.email);
    }
    return backToAuthorize(c, request);
  })
  .post("/authorize", sameOriginForm, async (c) => {
    const { request, response } = await checkedRequest(c);
    if (!request) return response;
    const session = await ownerSessionOf(c);
    if (!session) return backToAuthorize(c, request);
    const body = await c.req.parseBody();
    if (!csrfTokenMatches(session.csrfToken, body.csrf_token)) return forgedForm(c, request);
    const issuer = oauthIssuer(c.env.BASE_URL);
    const decision = formField(body, "decision");
    if (decision === "refuse") return c.redirect(refuseAuthorization(request, issuer), 303);
    if (decision !== "approve") return backToAuthorize(c, request);
    const outcome = await approveAuthorization(c.var.deps, request, session.business, issuer);
    if (outcome.outcome === "redirect") return c.redirect(outcome.location, 303);
    return page(
      c,
      403,
      <PlanPage request={request} session={session} message={outcome.message} />,
      request.redirectUri,
    );
  })
  .post("/authorize/sign-out", async (c) => {
    const { request, response } = await checkedRequest(c);
    if (!request) return response;
    const session = await ownerSessionOf(c);
    if (session) {
      const body = await c.req.parseBody();
      if (!csrfTokenMatches(session.csrfToken, body.csrf_token)) return forgedForm(c, request);
      await signOutOwner(c.var.deps, sessionTokenOf(c));
    }
    endOwnerSession(c);
    return backToAuthorize(c, request);
  })
  // Errors are pages here, as on the dashboard: an unexpected one is a 500 page, never the API's JSON.
  .onError(
    respondToPageError<AppEnv>((c, status, message) =>
      page(c, status, <ErrorPage title={errorTitle(status)} message={message} retry={startAgain(c)} />),
    ),
  );
