import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { discoveryDocument } from "../domain/oauth/discovery";

/** RFC 8414 §3: the authorization server's metadata, public, at its well-known address. */
export const wellKnown = new Hono<AppEnv>().get("/.well-known/oauth-authorization-server", (c) => {
  c.header("Cache-Control", "public, max-age=3600");
  return c.json(discoveryDocument(c.env.BASE_URL));
});
