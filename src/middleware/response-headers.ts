import { createMiddleware } from "hono/factory";

/** One year, subdomains included: the service is reached over https only (RFC 6797 §6.1). */
const STRICT_TRANSPORT_SECURITY = "max-age=31536000; includeSubDomains";

/**
 * Every answer of the partner API, success or error, whoever answered it (a route, the error mapping, the 404, 405
 * or 413 of the app): `Cache-Control: no-store` (RFC 9111 §5.2.2.5), so that no cache between the partner and us,
 * nor the partner's HTTP client, keeps a business's bookings, a key's answers or a secret shown once. The one answer
 * that sets its own is the public OpenAPI document (`public, max-age=300`): it is the same for everyone.
 */
const PARTNER_API = /^\/api\/v1(\/|$)/;

/**
 * The headers of every response of the Worker, whoever answered it (a route, an error mapping, the 404), set on the
 * way out (docs/architecture.md, Pages): `nosniff`, so that no answer (a JSON body echoing a partner's text, the
 * reference's script) is ever read by a browser as another type than the one it is served as; and HSTS when the
 * request came over https, so that the browser never uses plain http for this host again. Over http it is left out:
 * RFC 6797 §7.2 says a host must not send it there (and local development runs on http). Under `/api/v1`, no-store.
 */
export const responseHeaders = createMiddleware(async (c, next) => {
  await next();
  c.header("X-Content-Type-Options", "nosniff");
  if (new URL(c.req.url).protocol === "https:") c.header("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY);
  if (PARTNER_API.test(c.req.path) && !c.res.headers.has("Cache-Control")) c.header("Cache-Control", "no-store");
});
