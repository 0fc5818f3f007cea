import type { OpenAPIHono } from "@hono/zod-openapi";
import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { SANDBOX_SHARD } from "../db/shards";
import {
  createSandboxBusiness,
  limitSandboxCreations,
  MAX_LIVE_SANDBOXES,
  SANDBOX_CREATIONS_PER_MINUTE,
} from "../domain/sandbox/businesses";
import { invalid } from "../lib/api-error";
import { creatorNetworkOf } from "../lib/client-address";
import { announceIgnored } from "../lib/ignored-members";
import { parseOrThrow } from "../lib/validation";
import { JSON_CONTENT_TYPE, NOT_JSON_BODY, NOT_VALID_JSON } from "../middleware/error-responses";
import { useShard } from "../middleware/request-dependencies";
import { ErrorBody, errorResponses } from "../schemas/error-body";
import { CreatedSandboxBusiness, SandboxBusinessBody } from "../schemas/sandbox";
import { IGNORED_MEMBERS, json } from "./partner-router";

/**
 * The body, when there is one, as JSON; no body, or an empty one, is `{}`: every member is optional
 * (docs/guides/sandbox.md, Creating one).
 */
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
  const body = await optionalJsonBody(c);
  const input = parseOrThrow(SandboxBusinessBody, body, "json");
  announceIgnored(c, body, input);
  useShard(c, SANDBOX_SHARD);
  const created = await createSandboxBusiness(c.var.deps, input);
  return c.json({ ...created, dashboard_url: new URL("/dashboard", c.env.BASE_URL).href }, 201);
});

/**
 * Its entry in the reference, beside the sandbox operations: served under `/api`, outside `/api/v1` and without a
 * credential, it names its own server (`openApiDocument` sets it, for the document's base URL).
 */
export const SANDBOX_CREATION_PATH = "/sandbox/businesses";

export function registerSandboxCreation(registry: OpenAPIHono["openAPIRegistry"]): void {
  registry.registerPath({
    method: "post",
    path: SANDBOX_CREATION_PATH,
    operationId: "createSandboxBusiness",
    summary: "Create a sandbox business",
    description: `A sandbox business with demo bookings, orders and knowledge, its test key (sk_test_…) and its owner's dashboard sign-in, shown once. No credential; at most ${SANDBOX_CREATIONS_PER_MINUTE} a minute from one network, ${MAX_LIVE_SANDBOXES} in use at once ([the sandbox guide](/docs/guides/sandbox)).`,
    tags: ["Sandbox"],
    security: [],
    request: { body: { required: false, content: json(SandboxBusinessBody) } },
    responses: {
      201: {
        description: "The business, its test key and its owner's sign-in",
        headers: IGNORED_MEMBERS,
        content: json(CreatedSandboxBusiness),
      },
      ...errorResponses(400),
      429: { description: "Too many creations from this network, or the sandbox is full", content: json(ErrorBody) },
    },
  });
}
