import type { Child } from "hono/jsx";
import type { OwnerSession } from "../../domain/access/owner-sign-in";
import { CsrfField, Page } from "../../pages/page-shell";
import { TimeZone, ZoneNote } from "./time-text";

const NAV = [
  ["/dashboard", "Overview"],
  ["/dashboard/actions", "Actions"],
  ["/dashboard/intakes", "Intakes"],
  ["/dashboard/knowledge", "Knowledge"],
] as const;

/**
 * The navigation's wording: Integration holds API keys, Connected apps and Webhooks (docs/decisions.md, Exactly as
 * the contract says).
 */
const INTEGRATION = [
  ["/dashboard/keys", "API keys"],
  ["/dashboard/apps", "Connected apps"],
  ["/dashboard/webhooks", "Webhooks"],
] as const;

/** A dashboard page: the business's name and the navigation (signed in), then the page's title and content. */
export function Layout(props: { title: string; session?: OwnerSession; children: Child }) {
  const header = (
    <header>
      {/* The first thing a keyboard reaches: past the navigation, to the page's own content (shown when focused). */}
      <a class="skip" href="#main">
        Skip to content
      </a>
      <strong>{props.session ? props.session.business.name : "Secretary"}</strong>
      {props.session && (
        <nav aria-label="Dashboard">
          {/* On a phone the links fold behind Menu, a disclosure that needs no script; on a wider screen they are all
              shown and Menu is not (the page shell's styles). */}
          <details class="menu">
            <summary>Menu</summary>
            <div class="menu-links">
              {NAV.map(([href, label]) => (
                <a href={href}>{label}</a>
              ))}
              {/* A real group: named for assistive technology, and set apart from the links beside it on screen. */}
              {/* biome-ignore lint/a11y/useSemanticElements: a fieldset groups form controls; these are links. */}
              <span class="nav-group" role="group" aria-labelledby="nav-integration-name" data-testid="nav-integration">
                <span id="nav-integration-name" class="nav-group-name">
                  Integration
                </span>
                {INTEGRATION.map(([href, label]) => (
                  <a href={href}>{label}</a>
                ))}
              </span>
              <form class="inline" method="post" action="/dashboard/sign-out">
                <Csrf session={props.session} />
                <button type="submit">Sign out</button>
              </form>
            </div>
          </details>
        </nav>
      )}
    </header>
  );
  return (
    <Page title={`${props.title} · Secretary`} header={header}>
      <main id="main">
        <h1>{props.title}</h1>
        {props.session ? (
          <TimeZone.Provider value={props.session.business.timeZone}>
            <ZoneNote />
            {props.children}
          </TimeZone.Provider>
        ) : (
          props.children
        )}
      </main>
    </Page>
  );
}

/** A small status label: green when `good`, red otherwise; the text says the state (not the colour alone). */
export const Tag = (props: { good: boolean; children: Child }) => (
  <span class={`tag ${props.good ? "on" : "off"}`}>{props.children}</span>
);

/** On or off, for actions and intakes. */
export const OnOff = (props: { enabled: boolean }) => <Tag good={props.enabled}>{props.enabled ? "on" : "off"}</Tag>;

/** A hidden CSRF field: every form of a signed-in page carries the session's token (synchronizer token pattern). */
export const Csrf = (props: { session: OwnerSession }) => <CsrfField token={props.session.csrfToken} />;

/** A one-button form posting to `action` (switch on/off, revoke, remove, Test, disconnect). */
export function ButtonForm(props: {
  session: OwnerSession;
  action: string;
  label: string;
  kind?: "primary" | "danger";
  fields?: Record<string, string>;
}) {
  return (
    <form class="inline" method="post" action={props.action}>
      <Csrf session={props.session} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" class={props.kind}>
        {props.label}
      </button>
    </form>
  );
}
