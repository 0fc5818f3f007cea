import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { database } from "../db/client";
import { parseClientMetadata, registerClient } from "../domain/oauth/clients";
import { revocationRequest } from "../domain/oauth/revocation";
import { tokenRequest } from "../domain/oauth/tokens";
import { invalidRequest, OAuthError } from "../lib/oauth-errors";
import { doNotStore, respondToOAuthError } from "../middleware/error-responses";

/** The token and revocation endpoints take `application/x-www-form-urlencoded` (RFC 6749 §3.2, RFC 7009 §2.1). */
async function formBody(c: Context): Promise<URLSearchParams> {
  const type = c.req.header("Content-Type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) {
    throw invalidRequest("The request body must be sent as application/x-www-form-urlencoded.");
  }
  return new URLSearchParams(await c.req.text());
}

/** RFC 7591 §3.1: the registration request is a JSON object. */
async function jsonBody(c: Context): Promise<unknown> {
  const type = c.req.header("Content-Type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new OAuthError("invalid_client_metadata", "The request body must be sent as application/json.");
  }
  try {
    return JSON.parse(await c.req.text());
  } catch {
    throw new OAuthError("invalid_client_metadata", "The request body is not valid JSON.");
  }
}

/**
 * `/api/oauth`: registration (RFC 7591), token (RFC 6749 §3.2) and revocation (RFC 7009). Thin: read the body,
 * call one domain function, shape the answer. No CORS: browser scripts are not clients of this service.
 */
export const oauthApi = new Hono<AppEnv>()
  .post("/register", async (c) => {
    const metadata = parseClientMetadata(await jsonBody(c));
    const client = await registerClient(database(c.env.DB), metadata);
    doNotStore(c);
    return c.json(client, 201);
  })
  .post("/token", async (c) => {
    const form = await formBody(c);
    const tokens = await tokenRequest(database(c.env.DB), c.req.header("Authorization"), form);
    doNotStore(c);
    return c.json(tokens, 200);
  })
  .post("/revoke", async (c) => {
    const form = await formBody(c);
    await revocationRequest(database(c.env.DB), c.req.header("Authorization"), form);
    doNotStore(c);
    // RFC 7009 §2.2: 200, also for a token that was unknown or already revoked. The content is ignored by clients.
    return c.body(null, 200);
  });

oauthApi.onError(respondToOAuthError);
