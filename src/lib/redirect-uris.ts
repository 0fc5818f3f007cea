/**
 * Redirect URI rules of OAuth clients (docs/guides/oauth.md, 1. Register once: https, or http on loopback; RFC 9700
 * §4.1.3 and OAuth 2.1: exact string matching; RFC 8252 §7.3: only a loopback URI's port may vary).
 */

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

function parseUrl(uri: string): URL | undefined {
  try {
    return new URL(uri);
  } catch {
    return undefined;
  }
}

/** Why `uri` cannot be registered, as a predicate for "The redirect URI ..."; undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  // Printable ASCII only: the URI is compared as a string, so there must be exactly one way to write it.
  if (!/^[\x21-\x7e]+$/.test(uri)) return "must be written in printable ASCII without spaces";
  const url = parseUrl(uri);
  if (!url) return "must be an absolute URL";
  // RFC 6749 §3.1.2: "The endpoint URI MUST NOT include a fragment component."
  if (uri.includes("#")) return "must not contain a fragment (#)";
  if (url.username || url.password) return "must not contain a user name or password";
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return "must use https (http is allowed only for localhost, 127.0.0.1 and [::1])";
}

/** `http://<loopback host>[:port]<rest>`, split so that everything but the port is compared as written. */
const LOOPBACK_URI = /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/;

function loopbackParts(uri: string) {
  const match = LOOPBACK_URI.exec(uri);
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return { host: match[1], rest: match[3] ?? "" };
}

/**
 * The registered URI that `requested` stands for, or undefined. Exact string comparison (RFC 9700 §4.1.3): no
 * normalisation, no prefix or pattern matching. The one exception is RFC 8252 §7.3: for an http loopback URI the
 * port may differ, because native apps listen on whatever port the system gives them; host, path and query must
 * still be exactly as registered.
 */
export function matchRedirectUri(registered: readonly string[], requested: string): string | undefined {
  if (registered.includes(requested)) return requested;
  const asked = loopbackParts(requested);
  if (!asked) return undefined;
  return registered.find((uri) => {
    const parts = loopbackParts(uri);
    return parts !== undefined && parts.host === asked.host && parts.rest === asked.rest;
  });
}
