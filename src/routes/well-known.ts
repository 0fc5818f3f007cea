import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { discoveryDocument } from "../domain/oauth/discovery";
import { protectedResourceDocument, RESOURCE_METADATA_PATH } from "../domain/oauth/protected-resource";

/** The public metadata documents, which change only with a deployment: cached for an hour. */
const publicJson = (c: Context<AppEnv>, document: object) => {
  c.header("Cache-Control", "public, max-age=3600");
  return c.json(document);
};

/**
 * RFC 8414 §3: the authorization server's metadata. RFC 9728 §3.1: the partner API's, at the well-known path before
 * `/api/v1`, and at the bare path too for a client that asks the origin (docs/oauth.md, Finding the authorization
 * server): the same document, which names `/api/v1` as the resource.
 */
const resourceMetadata = (c: Context<AppEnv>) =>
  publicJson(c, protectedResourceDocument(c.env.BASE_URL, c.env.SERVICE_NAME));

export const wellKnown = new Hono<AppEnv>()
  .get("/.well-known/oauth-authorization-server", (c) => publicJson(c, discoveryDocument(c.env.BASE_URL)))
  .get(`${RESOURCE_METADATA_PATH}/api/v1`, resourceMetadata)
  .get(RESOURCE_METADATA_PATH, resourceMetadata);
