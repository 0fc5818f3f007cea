import { createMiddleware } from "hono/factory";

/** One year, subdomains included: the service is reached over https only (RFC 6797 §6.1). */
const STRICT_TRANSPORT_SECURITY = "max-age=31536000; includeSubDomains";

/**
 * The headers of every response of the Worker, whoever answered it (a route, an error mapping, the 404), set on the
 * way out (DESIGN.md, Security notes: Pages): `nosniff`, so that no answer (a JSON body echoing a partner's text, the
 * reference's script) is ever read by a browser as another type than the one it is served as; and HSTS when the
 * request came over https, so that the browser never uses plain http for this host again. Over http it is left out:
 * RFC 6797 §7.2 says a host must not send it there (and local development runs on http).
 */
export const responseHeaders = createMiddleware(async (c, next) => {
  await next();
  c.header("X-Content-Type-Options", "nosniff");
  if (new URL(c.req.url).protocol === "https:") c.header("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY);
});
