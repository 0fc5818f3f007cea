import { sha256 } from "@oslojs/crypto/sha2";
import { encodeBase64 } from "@oslojs/encoding";
import type { Context } from "hono";
import type { Child } from "hono/jsx";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { OwnerSession } from "../../domain/access/owner-sign-in";

const STYLES = [
  "*{box-sizing:border-box}body{font-family:system-ui,sans-serif;margin:0;color:#1b1b1f;line-height:1.5;background:#f6f7f9}",
  "header{background:#1b2a4a;color:#fff;padding:.8rem 1rem}header a{color:#fff}nav{display:flex;flex-wrap:wrap;gap:.3rem 1rem;margin-top:.4rem}",
  "main{max-width:52rem;margin:0 auto;padding:1rem}h1{font-size:1.4rem}h2{font-size:1.15rem;margin-top:1.6rem}",
  "section,.card{background:#fff;border:1px solid #dde1e8;border-radius:6px;padding:1rem;margin:1rem 0}",
  "table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:.35rem .4rem;border-bottom:1px solid #eee;vertical-align:top}",
  "label{display:block;margin:.6rem 0 .2rem;font-weight:600}input,textarea{width:100%;padding:.5rem;font:inherit}",
  "button{padding:.45rem 1rem;font:inherit;cursor:pointer;border-radius:4px;border:1px solid #888;background:#fff}",
  "button.primary{background:#1b4fd8;color:#fff;border-color:#1b4fd8}button.danger{border-color:#a40000;color:#a40000}",
  "form.inline{display:inline}.notice{background:#e8f3ea;border-color:#9cc9a5}.warning{background:#fff4e0;border-color:#e2b25c}",
  ".error{color:#a40000;font-weight:600}.muted{color:#555;font-size:.9rem}code,.secret{font-family:ui-monospace,monospace;word-break:break-all}",
  ".tag{display:inline-block;padding:0 .4rem;border-radius:3px;background:#eef;font-size:.85rem}.on{background:#dff5e3}.off{background:#f3e3e3}",
  "@media (max-width:40rem){td,th{display:block;border:0}tr{display:block;border-bottom:1px solid #ddd;padding:.4rem 0}}",
].join("");

/** The CSP allows exactly this stylesheet, by its hash: no script and no other style can run on a dashboard page. */
const STYLE_HASH = `'sha256-${encodeBase64(sha256(new TextEncoder().encode(STYLES)))}'`;

const NAV = [
  ["/dashboard", "Overview"],
  ["/dashboard/keys", "API keys"],
  ["/dashboard/apps", "Connected apps"],
  ["/dashboard/actions", "Actions"],
  ["/dashboard/intakes", "Intakes"],
  ["/dashboard/knowledge", "Knowledge"],
  ["/dashboard/webhooks", "Webhooks"],
] as const;

export function Layout(props: { title: string; session?: OwnerSession; children: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${props.title} · Secretary`}</title>
        <style>{STYLES}</style>
      </head>
      <body>
        <header>
          <strong>{props.session ? props.session.business.name : "Secretary"}</strong>
          {props.session && (
            <nav aria-label="Dashboard">
              {NAV.map(([href, label]) => (
                <a href={href}>{label}</a>
              ))}
              <form class="inline" method="post" action="/dashboard/sign-out">
                <input type="hidden" name="csrf_token" value={props.session.csrfToken} />
                <button type="submit">Sign out</button>
              </form>
            </nav>
          )}
        </header>
        <main>
          <h1>{props.title}</h1>
          {props.children}
        </main>
      </body>
    </html>
  );
}

/** A small status label: green when `good`, red otherwise; the text says the state (not the colour alone). */
export const Tag = (props: { good: boolean; children: Child }) => (
  <span class={`tag ${props.good ? "on" : "off"}`}>{props.children}</span>
);

/** On or off, for actions and intakes. */
export const OnOff = (props: { enabled: boolean }) => <Tag good={props.enabled}>{props.enabled ? "on" : "off"}</Tag>;

/** A hidden CSRF field: every form of a signed-in page carries the session's token (synchronizer token pattern). */
export const Csrf = (props: { session: OwnerSession }) => (
  <input type="hidden" name="csrf_token" value={props.session.csrfToken} />
);

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

/**
 * Renders a page with the headers every dashboard page carries: no framing (X-Frame-Options and frame-ancestors), a
 * CSP that runs no script, forms posting only here, and no caching (pages show keys and customer answers).
 */
export function render(c: Context, status: ContentfulStatusCode, page: Child) {
  c.header("X-Frame-Options", "DENY");
  c.header(
    "Content-Security-Policy",
    `default-src 'none'; style-src ${STYLE_HASH}; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
  );
  c.header("Cache-Control", "no-store");
  c.header("Referrer-Policy", "same-origin");
  return c.html(`<!doctype html>${page}`, status);
}
