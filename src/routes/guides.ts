import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { FAVICON, setPageHeaders } from "../pages/page-shell";
import { serveStaticFile } from "./static-file";

/*
 * The partner guides (docs/guides/*.md) and the page at `/`, rendered by `npm run guides` (scripts/guides.ts) into
 * assets/ and served from the ASSETS binding, so that their text stays out of the Worker's bundle
 * (docs/performance.md, Bundle). The Worker runs first for every path (wrangler.toml, [assets]), so these files leave only
 * through these routes, with the pages' headers (docs/architecture.md, Pages).
 */

/** The guides' one stylesheet, from this origin; the pages run no script and load nothing else. */
const STYLESHEET = "/docs/guides/guides.css";
/** A guide's name in its address: its file's, lowercase words joined by hyphens. */
const GUIDE_NAME = /^[a-z][a-z0-9-]*$/;
const GUIDE_POLICY = { "style-src": "'self'", "img-src": "'self'", "form-action": "'none'" };

/**
 * A rendered page, found by the asset path that serves it (`/docs/guides/webhooks` serves webhooks.html). Anything
 * but the file itself (a 404, or the asset server's redirect to a canonical path) is this service's 404. Fetched
 * without the request's conditional headers: pages are never cached (`no-store`), so a 304 never applies.
 */
async function servePage(c: Context<AppEnv>, assetPath: string) {
  const asset = await c.env.ASSETS.fetch(new URL(assetPath, c.req.url));
  if (asset.status !== 200 || !asset.body) {
    await asset.body?.cancel();
    return c.notFound();
  }
  setPageHeaders(c, GUIDE_POLICY);
  c.header("Content-Type", "text/html; charset=utf-8");
  return c.body(asset.body);
}

/** Public, without a credential, like /docs: the home page, the guides' index, each guide and their stylesheet. */
export const guides = new Hono<AppEnv>()
  .get("/", (c) => servePage(c, "/"))
  .get("/docs/guides", (c) => servePage(c, "/docs/guides/"))
  // The icon every page names (src/pages/page-shell.tsx), and at the address browsers ask for without being told.
  .get(FAVICON, serveStaticFile)
  .get("/favicon.ico", (c) => c.redirect(FAVICON, 301))
  // A guide, or their stylesheet, by one route: Hono's fastest router, which every request of the Worker goes
  // through, cannot hold a static path beside a parameter at the same place (nor a pattern in one). The index has
  // one address, /docs/guides, as every page has one: `/docs/guides/index` is not another.
  .get("/docs/guides/:name", (c) => {
    if (c.req.path === STYLESHEET) return serveStaticFile(c);
    const name = c.req.param("name");
    return name === "index" || !GUIDE_NAME.test(name) ? c.notFound() : servePage(c, `/docs/guides/${name}`);
  });
