import { sha256 } from "@oslojs/crypto/sha2";
import { encodeBase64 } from "@oslojs/encoding";
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";

/**
 * The one shell of every HTML page the service serves to an owner: the dashboard, and the OAuth sign-in and consent
 * pages. One stylesheet, one set of security headers (docs/architecture.md, Pages), one sign-in form.
 */

const STYLES = [
  "*{box-sizing:border-box}body{font-family:system-ui,sans-serif;margin:0;color:#1b1b1f;line-height:1.5;background:#f6f7f9}",
  "header{background:#1b2a4a;color:#fff;padding:.8rem 1rem}header a{color:#fff}",
  ".menu-links{display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin-top:.4rem}.menu>summary{cursor:pointer;width:max-content;padding:.3rem .4rem .3rem 0}",
  "main{max-width:52rem;margin:0 auto;padding:1rem}h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:1.6rem}",
  "section,.card{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:1rem;margin:1rem 0}",
  "section>h2:first-child,.card>h2:first-child{margin-top:0}",
  "table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.35rem .4rem;border-bottom:1px solid #eee;vertical-align:top}",
  "label{display:block;margin:.6rem 0 .2rem;font-weight:600}input,textarea,select{width:100%;padding:.5rem;font:inherit}",
  "button{padding:.45rem 1rem;font:inherit;cursor:pointer;border-radius:4px;border:1px solid #888;background:#fff}",
  "button.primary{background:#1b4fd8;color:#fff;border-color:#1b4fd8}button.danger{border-color:#a40000;color:#a40000}",
  "form.inline{display:inline}.notice{background:#e8f3ea;border-color:#9cc9a5}.warning{background:#fff4e0;border-color:#e2b25c}",
  ".error{color:#a40000;font-weight:600}.muted{color:#555;font-size:.9rem}code,.secret{font-family:ui-monospace,monospace;word-break:break-all}",
  ".tag{display:inline-block;padding:0 .4rem;border-radius:3px;background:#eef;font-size:.85rem}.on{background:#dff5e3}.off{background:#f3e3e3}",
  // Long lines (JSON, URLs) wrap rather than widen the page on a phone (WCAG 1.4.10, Reflow).
  "pre{white-space:pre-wrap;overflow-wrap:anywhere}",
  // Where the keyboard is, always visible (WCAG 2.4.7), white on the dark header; the skip link shows when focused.
  ":focus-visible{outline:3px solid #1b4fd8;outline-offset:2px}header :focus-visible{outline-color:#fff}",
  ".skip{position:absolute;left:-100vw}.skip:focus{position:static;display:block;width:max-content;margin-bottom:.4rem}",
  "@media (max-width:40rem){td,th{display:block;border:0}tr{display:block;border-bottom:1px solid #ddd;padding:.4rem 0}}",
  // A page on its own, outside the dashboard (the OAuth pages): narrow, centred, larger buttons.
  "body.narrow{max-width:34rem;margin:3rem auto;padding:0 1rem;background:#fff}.narrow main{padding:0}",
  ".narrow button{margin:1rem .5rem 0 0;padding:.55rem 1.2rem;font-size:1rem}",
  "button.link{background:none;border:0;padding:0;margin:0;color:#1b4fd8;text-decoration:underline;font-size:inherit}",
  // The Integration group of the navigation: its links together, behind a small caps name, apart from the others.
  ".nav-group{display:inline-flex;flex-wrap:wrap;gap:.3rem .8rem;align-items:baseline;padding-left:.8rem;border-left:1px solid #5a6a8a}",
  ".nav-group-name{font-size:.75rem;text-transform:uppercase;letter-spacing:.06em;color:#c9d3e6}",
  // Wider than a phone, the navigation's Menu is not shown and its links always are. Only where the browser can style
  // a closed <details>'s content: elsewhere Menu stays, and opens the links on a desktop too.
  "@supports selector(::details-content){@media (min-width:40.01rem){.menu>summary{display:none}.menu::details-content{display:block;content-visibility:visible}}}",
  // On a phone the header is two short lines, the business and Menu, and the links open below it one a line.
  "@media (max-width:40rem){header{padding:.5rem .8rem}.menu-links{flex-direction:column;align-items:flex-start}",
  ".nav-group{flex-direction:column;align-items:flex-start;padding:.2rem 0 0;border-left:0}}",
].join("");

/** The service's icon, one file of this origin (assets/favicon.svg), named by every page so none asks for another. */
export const FAVICON = "/favicon.svg";

/** The CSP allows exactly this stylesheet, by its hash: no script and no other style can run on any page. */
const STYLE_HASH = `'sha256-${encodeBase64(sha256(new TextEncoder().encode(STYLES)))}'`;

/** The document around a page's content; `narrow` for a page on its own, `header` for the dashboard's bar. */
export function Page(props: { title: string; narrow?: boolean; header?: Child; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title}</title>
        <link rel="icon" href={FAVICON} type="image/svg+xml" />
        <style dangerouslySetInnerHTML={{ __html: STYLES }} />
      </head>
      <body class={props.narrow ? "narrow" : undefined}>
        {props.header}
        {props.children}
      </body>
    </html>
  );
}

/**
 * A page's Content-Security-Policy: nothing but what the page names in `allow` (which loads nothing from another
 * origin), and never framed (against clickjacking) nor given another base URL, whatever the page allows.
 */
function contentSecurityPolicy(allow: Record<string, string>): string {
  const directives = { "default-src": "'none'", ...allow, "frame-ancestors": "'none'", "base-uri": "'none'" };
  return Object.entries(directives)
    .map(([directive, sources]) => `${directive} ${sources}`)
    .join("; ");
}

/**
 * The headers every HTML page carries (docs/architecture.md, Pages) with the page's own CSP: no framing
 * (X-Frame-Options beside frame-ancestors, for browsers without CSP 2), no referrer, never cached (pages show keys and
 * customers' answers). `X-Content-Type-Options` and HSTS come with every response (middleware/response-headers.ts).
 */
export function setPageHeaders(c: Context, allow: Record<string, string>) {
  c.header("Content-Security-Policy", contentSecurityPolicy(allow));
  c.header("X-Frame-Options", "DENY");
  c.header("Referrer-Policy", "no-referrer");
  c.header("Cache-Control", "no-store");
}

/**
 * Answers an owner's page: no script at all, this stylesheet only, and forms posting only to this service, plus
 * `formOrigin` where a form's answer redirects the browser there (browsers apply form-action to the redirect that
 * follows a POST: the consent page leads back to the app).
 */
export function renderPage(c: Context, status: ContentfulStatusCode, page: Child, formOrigin?: string) {
  setPageHeaders(c, {
    "style-src": STYLE_HASH,
    "img-src": "'self'",
    "form-action": formOrigin ? `'self' ${formOrigin}` : "'self'",
  });
  return c.html(`<!doctype html>${page}`, status);
}

/** A hidden CSRF field: every form carries its token (synchronizer token, or the sign-in's double-submit cookie). */
export const CsrfField = (props: { token: string }) => <input type="hidden" name="csrf_token" value={props.token} />;

/**
 * The owner's sign-in form, the same on the dashboard and on the consent page. After a failed attempt it is drawn
 * again with the `email` that was sent (escaped like any attribute), so only the password is typed again; the password
 * is never sent back.
 */
export function SignInForm(props: { action: string; csrfToken: string; error?: string; email?: string }) {
  return (
    <>
      {props.error && (
        <p class="error" role="alert">
          {props.error}
        </p>
      )}
      <form method="post" action={props.action}>
        <CsrfField token={props.csrfToken} />
        <label for="email">Email address</label>
        <input id="email" name="email" type="email" autocomplete="username" value={props.email} required />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <p>
          <button type="submit" class="primary">
            Sign in
          </button>
        </p>
      </form>
    </>
  );
}
