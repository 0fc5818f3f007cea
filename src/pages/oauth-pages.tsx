import type { Child, FC } from "hono/jsx";
import type { OwnerSession } from "../domain/access/owner-sign-in";
import { type AuthorizationRequest, authorizationQuery } from "../domain/oauth/authorization";
import { clientIdHost } from "../lib/client-id-urls";
import { CsrfField, Page, SignInForm } from "./page-shell";

/**
 * The pages of the authorization flow (docs/oauth.md, 2. Send the owner to the authorization page);
 * routes/oauth-authorize.tsx serves them.
 */

/** What an approved app may do (docs/oauth.md, 2. Send the owner to the authorization page), through /api/v1 only. */
const PERMISSIONS = [
  "Read your business details, appointments and orders",
  "Subscribe to webhooks: notifications of bookings, orders, payments, leads and reviews",
  "Push knowledge that the Secretary answers from",
  "Register connected actions and intakes, each off until you switch it on",
];
const LIMITS =
  "It cannot sign in to your dashboard, use your assistant tools, change bookings, orders or payments, or switch " +
  "an action or intake on. You can disconnect it at any time.";

/** A page of the authorization flow: on its own, outside the dashboard; its content is the page's main landmark. */
const Layout: FC<{ title: string; children?: Child }> = ({ title, children }) => (
  <Page title={title} narrow>
    <main>{children}</main>
  </Page>
);

const hostOf = (uri: string) => new URL(uri).host;

/**
 * The app's name and, for an app known by its metadata document (docs/oauth.md, Client ID metadata documents), the
 * host that serves it: the name is the document's, the host the client_id's, so an app cannot pass itself off as
 * another site.
 */
const AppName: FC<{ request: AuthorizationRequest }> = ({ request: { client } }) => (
  <>
    <strong>{client.clientName}</strong>
    {client.metadataFetchedAt && (
      <>
        {" "}
        (as it names itself) from <strong>{clientIdHost(client.id)}</strong>
      </>
    )}
  </>
);

/**
 * Apps register themselves and choose their own name, so the consent and sign-in pages say that the name is the
 * app's own claim (docs/architecture.md, OAuth): a name such as "Secretary Support" must not read as our word.
 */
const NameClaim: FC<{ request: AuthorizationRequest }> = ({ request }) => (
  <p class="muted">The name “{request.client.clientName}” is how the app describes itself; we have not verified it.</p>
);

export const SignInPage: FC<{
  request: AuthorizationRequest;
  serviceName: string;
  csrfToken: string;
  error?: string;
  email?: string;
}> = ({ request, serviceName, csrfToken, error, email }) => (
  <Layout title={`Sign in to connect ${request.client.clientName}`}>
    <h1>Sign in to connect {request.client.clientName}</h1>
    <p>
      <AppName request={request} /> asks to connect to your business on {serviceName}. Sign in with your business owner
      account to continue.
    </p>
    <NameClaim request={request} />
    <SignInForm
      action={`/oauth/authorize/sign-in?${authorizationQuery(request)}`}
      csrfToken={csrfToken}
      error={error}
      email={email}
    />
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

export const ConsentPage: FC<{ request: AuthorizationRequest; session: OwnerSession }> = ({ request, session }) => (
  <Layout title={`Connect ${request.client.clientName}`}>
    <h1>
      Connect {request.client.clientName} to {session.business.name}?
    </h1>
    <SignedInAs request={request} session={session} />
    <p>
      <AppName request={request} /> will be able to:
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
    <NameClaim request={request} />
    <p class="muted">Either way you go back to {hostOf(request.redirectUri)}.</p>
  </Layout>
);

export const PlanPage: FC<{ request: AuthorizationRequest; session: OwnerSession; message: string }> = ({
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

/** `back`: the app's redirect URI with the error, a link the owner may follow (routes/oauth-authorize.tsx). */
export const ErrorPage: FC<{ title: string; message: string; retry?: string; back?: string | undefined }> = ({
  title,
  message,
  retry,
  back,
}) => (
  <Layout title={title}>
    <h1>{title}</h1>
    <p class="error" role="alert">
      {message}
    </p>
    {back && (
      <p>
        <a href={back}>Go back to {hostOf(back)}</a>
      </p>
    )}
    {retry ? (
      <p>
        <a href={retry}>Start again</a>
      </p>
    ) : (
      <p class="muted">The link that brought you here is not valid. Tell the app's developer what it says above.</p>
    )}
  </Layout>
);
