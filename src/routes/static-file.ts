import type { Context } from "hono";
import type { AppEnv } from "../app-env";

/**
 * A file of assets/ answered through the Worker, which runs first for every path (wrangler.toml, [assets]): the
 * file's own answer (its type, ETag, or a 304 without a body), through `c.body` so that it carries the headers
 * middleware prepared for it too (X-Request-Id).
 */
export async function serveStaticFile(c: Context<AppEnv>) {
  const asset = await c.env.ASSETS.fetch(c.req.raw);
  return asset.body ? c.body(asset.body, asset) : c.body(null, asset);
}
