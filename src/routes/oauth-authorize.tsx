import { sha256 } from "@oslojs/crypto/sha2";
import { encodeBase64 } from "@oslojs/encoding";
import { type Context, Hono } from "hono";
import { raw } from "hono/html";
import type { Child, FC } from "hono/jsx";
import type { HtmlEscapedString } from "hono/utils/html";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "../app-env";
import { database } from "../db/client";
import { csrfTokenMatches, type OwnerSession, signInOwner, signOutOwner } from "../domain/access/owner-sign-in";
import {
  type AuthorizationRequest,
  approveAuthorization,
  authorizationQuery,
  checkAuthorizationRequest,
  connectionRefusal,
  refuseAuthorization,
} from "../domain/oauth/authorization";
import { oauthIssuer } from "../domain/oauth/discovery";
import {
  endOwnerSession,
  ownerSessionOf,
  sessionTokenOf,
  signInCsrfToken,
  signInCsrfValid,
  startOwnerSession,
} from "../middleware/owner-session";

/**
 * The authorization page (spec: Partner sign-in, steps 2 and 3; RFC 6749 §4.1): the owner signs in, sees what the
 * app may do, and approves or refuses. Server-rendered, no script. The rules live in the domain modules; this file
 * reads the request, picks the page and sets the cookies.
 *
 * - `GET  /oauth/authorize?…`           the sign-in page, or the consent page when signed in
 * - `POST /oauth/authorize/sign-in?…`   email + password → session cookie, 303 back to the GET
 * - `POST /oauth/authorize?…`           approve or refuse → 303 to the app's redirect URI
 * - `POST /oauth/authorize/sign-out?…`  ends the session, 303 back to the GET
 *
 * Every POST carries the authorization request in its query and checks it again from scratch.
 */

const STYLES =
  "body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;color:#1b1b1f;line-height:1.5}" +
  "h1{font-size:1.4rem}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.5rem;box-sizing:border-box}" +
  "button{margin:1rem .5rem 0 0;padding:.55rem 1.2rem;font-size:1rem;cursor:pointer}" +
  ".primary{background:#1b4fd8;color:#fff;border:0;border-radius:4px}" +
  ".secondary{background:#fff;border:1px solid #888;border-radius:4px}" +
  ".link{background:none;border:0;padding:0;margin:0;color:#1b4fd8;text-decoration:underline;font-size:inherit}" +
  ".error{color:#a40000;font-weight:600}.muted{color:#555;font-size:.9rem}";
/** CSP allows exactly this stylesheet, by its hash: no inline script or other style can run on the page. */
const STYLE_HASH = `'sha256-${encodeBase64(sha256(new TextEncoder().encode(STYLES)))}'`;

/** What an approved app may do (spec: Partner sign-in, step 2, and "A partner token reaches /api/v1 only"). */
const PERMISSIONS = [
  "Read your business details, appointments and orders",
  "Subscribe to webhooks: notifications of bookings, orders, payments, leads and reviews",
  "Push knowledge that the Secretary answers from",
  "Register connected actions and intakes, each off until you switch it on",
];
const LIMITS =
  "It cannot sign in to your dashboard, use your assistant tools, change bookings, orders or payments, or switch " +
  "an action or intake on. You can disconnect it at any time.";

const Layout: FC<{ title: string; children?: Child }> = ({ title, children }) => (
  <>
    {raw("<!doctype html>")}
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="referrer" content="no-referrer" />
        <title>{title}</title>
        <style dangerouslySetInnerHTML={{ __html: STYLES }} />
      </head>
      <body>{children}</body>
    </html>
  </>
);

const CsrfField: FC<{ token: string }> = ({ token }) => <input type="hidden" name="csrf_token" value={token} />;

const hostOf = (uri: string) => new URL(uri).host;

const SignInPage: FC<{
  request: AuthorizationRequest;
  serviceName: string;
  csrfToken: string;
  email?: string;
  error?: string;
}> = ({ request, serviceName, csrfToken, email, error }) => (
  <Layout title={`Sign in to connect ${request.client.clientName}`}>
    <h1>Sign in to connect {request.client.clientName}</h1>
    <p>
      <strong>{request.client.clientName}</strong> asks to connect to your business on {serviceName}. Sign in with your
      business owner account to continue.
    </p>
    {error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : null}
    <form method="post" action={`/oauth/authorize/sign-in?${authorizationQuery(request)}`}>
      <CsrfField token={csrfToken} />
      <label for="email">Email</label>
      <input id="email" type="email" name="email" autocomplete="username" required value={email ?? ""} />
      <label for="password">Password</label>
      <input id="password" type="password" name="password" autocomplete="current-password" required />
      <button class="primary" type="submit">
        Sign in
      </button>
    </form>
  </Layout>
);

const SignedInAs: FC<{ request: AuthorizationRequest; session: OwnerSession }> = ({ request, session }) => (
  <form method="post" action={`/oauth/authorize/sign-out?${authorizationQuery(request)}`} class="muted">
    <CsrfField token={session.csrfToken} />
    Signed in as {session.email} for {session.business.name}.{" "}
    <button class="link" type="submit">
      Not you? Sign out
    </button>
  </form>
);

const ConsentPage: FC<{ request: AuthorizationRequest; session: OwnerSession }> = ({ request, session }) => (
  <Layout title={`Connect ${request.client.clientName}`}>
    <h1>
      Connect {request.client.clientName} to {session.business.name}?
    </h1>
    <SignedInAs request={request} session={session} />
    <p>
      <strong>{request.client.clientName}</strong> will be able to:
    </p>
    <ul>
      {PERMISSIONS.map((permission) => (
        <li>{permission}</li>
      ))}
    </ul>
    <p>{LIMITS}</p>
    <form method="post" action={`/oauth/authorize?${authorizationQuery(request)}`}>
      <CsrfField token={session.csrfToken} />
      <button class="primary" type="submit" name="decision" value="approve">
        Approve
      </button>
      <button class="secondary" type="submit" name="decision" value="refuse">
        Refuse
      </button>
    </form>
    <p class="muted">Either way you go back to {hostOf(request.redirectUri)}.</p>
  </Layout>
);

const PlanPage: FC<{ request: AuthorizationRequest; session: OwnerSession; message: string }> = ({
  request,
  session,
  message,
}) => (
  <Layout title="This app cannot be connected">
    <h1>{request.client.clientName} cannot be connected</h1>
    <SignedInAs request={request} session={session} />
    <p class="error" role="alert">
      {message}
    </p>
    <form method="post" action={`/oauth/authorize?${authorizationQuery(request)}`}>
      <CsrfField token={session.csrfToken} />
      <button class="secondary" type="submit" name="decision" value="refuse">
        Go back to {hostOf(request.redirectUri)}
      </button>
    </form>
  </Layout>
);

const ErrorPage: FC<{ title: string; message: string; retry?: string }> = ({ title, message, retry }) => (
  <Layout title={title}>
    <h1>{title}</h1>
    <p class="error" role="alert">
      {message}
    </p>
    {retry ? (
      <p>
        <a href={retry}>Start again</a>
      </p>
    ) : (
      <p class="muted">The link that brought you here is not valid. Tell the app's developer what it says above.</p>
    )}
  </Layout>
);

/**
 * Answers a page with the headers every page here carries (DESIGN.md, Security notes: OAuth, "the consent page
 * cannot be framed"): `X-Frame-Options: DENY` and CSP `frame-ancestors 'none'` against clickjacking, no script at
 * all, forms only to this service and, on pages whose form leads back to the app, to the app's redirect origin
 * (browsers apply form-action to the redirect that follows the POST); never cached, no referrer.
 */
function page(
  c: Context<AppEnv>,
  status: ContentfulStatusCode,
  body: HtmlEscapedString | Promise<HtmlEscapedString>,
  formRedirectUri?: string,
) {
  const formAction = formRedirectUri ? `'self' ${new URL(formRedirectUri).origin}` : "'self'";
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src ${STYLE_HASH}; form-action ${formAction}; frame-ancestors 'none'; base-uri 'none'`,
  );
  c.header("X-Frame-Options", "DENY");
  c.header("Cache-Control", "no-store");
  c.header("Referrer-Policy", "no-referrer");
  c.header("X-Content-Type-Options", "nosniff");
  return c.html(body, status);
}

/** The authorization request of the URL, checked; an invalid one answers at once (error page or redirect). */
async function checkedRequest(c: Context<AppEnv>) {
  const check = await checkAuthorizationRequest(
    database(c.env.DB),
    new URL(c.req.url).searchParams,
    oauthIssuer(c.env.BASE_URL),
  );
  if (check.outcome === "valid") return { request: check.request };
  if (check.outcome === "error_redirect") return { response: c.redirect(check.location, 303) };
  return {
    response: page(c, 400, <ErrorPage title="This sign-in link is not valid" message={check.message} />),
  };
}

/** Back to the GET, which shows whatever fits now (303 after a POST: DESIGN.md, Security notes: OAuth). */
const backToAuthorize = (c: Context<AppEnv>, request: AuthorizationRequest) =>
  c.redirect(`/oauth/authorize?${authorizationQuery(request)}`, 303);

function signInPage(c: Context<AppEnv>, request: AuthorizationRequest, status: ContentfulStatusCode, error?: string) {
  // Reuse the browser's token when it has a well-formed one, so that two open tabs do not undo each other.
  const csrfToken = signInCsrfToken(c);
  return page(
    c,
    status,
    <SignInPage request={request} serviceName={c.env.SERVICE_NAME} csrfToken={csrfToken} error={error} />,
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
    const body = await c.req.parseBody();
    if (!signInCsrfValid(c, body.csrf_token)) {
      return signInPage(c, request, 403, "The form expired. Please sign in again.");
    }
    const email = formField(body, "email") ?? "";
    const signedIn = await signInOwner(database(c.env.DB), { email, password: formField(body, "password") ?? "" });
    if (!signedIn) return signInPage(c, request, 401, "The email address or password is not correct.");
    startOwnerSession(c, signedIn.token);
    return backToAuthorize(c, request);
  })
  .post("/authorize", async (c) => {
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
    const outcome = await approveAuthorization(database(c.env.DB), request, session.business, issuer);
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
      await signOutOwner(database(c.env.DB), sessionTokenOf(c));
    }
    endOwnerSession(c);
    return backToAuthorize(c, request);
  });
