import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { SANDBOX_SHARD } from "../db/shards";
import { createSandboxBusiness, limitSandboxCreations } from "../domain/sandbox/businesses";
import { creatorNetworkOf } from "../lib/client-address";
import { invalid } from "../lib/errors";
import { parseOrThrow } from "../lib/validation";
import { JSON_CONTENT_TYPE, NOT_JSON_BODY, NOT_VALID_JSON } from "../middleware/error-responses";
import { useShard } from "../middleware/request-dependencies";
import { SandboxBusinessBody } from "../schemas/sandbox";

/** The body, when there is one, as JSON (spec: Conventions); no body, or an empty one, is `{}`: every member is optional. */
async function optionalJsonBody(c: Context<AppEnv>): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return {};
  if (!JSON_CONTENT_TYPE.test(c.req.header("Content-Type") ?? ""))
    throw invalid(NOT_JSON_BODY, undefined, "invalid_content_type");
  try {
    return JSON.parse(text);
  } catch {
    throw invalid(NOT_VALID_JSON, undefined, "invalid_json");
  }
}

/**
 * `/api/sandbox`: a sandbox business, self-serve and without a credential (docs/decisions.md, Sandbox businesses). The
 * answer holds a key and a password shown once, so it is never stored by a cache.
 */
export const sandboxBusinesses = new Hono<AppEnv>().post("/businesses", async (c) => {
  c.header("Cache-Control", "no-store");
  await limitSandboxCreations(c.env.SANDBOX_RATE_LIMIT, creatorNetworkOf(c));
  const input = parseOrThrow(SandboxBusinessBody, await optionalJsonBody(c), "json");
  useShard(c, SANDBOX_SHARD);
  const created = await createSandboxBusiness(c.var.deps, input);
  return c.json({ ...created, dashboard_url: new URL("/dashboard", c.env.BASE_URL).href }, 201);
});
