import { type Context, type ErrorHandler, Hono } from "hono";
import type { AppEnv } from "../app-env";
import {
  deleteClient,
  managedClient,
  previousSecretSeconds,
  rotateClientSecret,
  updateClient,
} from "../domain/oauth/client-management";
import { clientInformation, limitRegistrations, parseClientMetadata, registerClient } from "../domain/oauth/clients";
import { REVOCATION_PARAMETERS, revocationRequest } from "../domain/oauth/revocation";
import { spendRequestBudget, TokenBudgetSpent } from "../domain/oauth/token-budget";
import { shardOfRevocation, shardOfTokenRequest } from "../domain/oauth/token-format";
import { tokenRequest } from "../domain/oauth/tokens";
import { clientAddressOf, creatorNetworkOf } from "../lib/client-address";
import { invalidRequest, OAuthError } from "../lib/oauth-errors";
import { doNotStore, respondToOAuthError } from "../middleware/error-responses";
import { useShard } from "../middleware/request-dependencies";

const FORM = "application/x-www-form-urlencoded";
const JSON_TYPE = "application/json";

/** The media type of the request body, without its parameters (`; charset=…`), in lower case. */
const mediaTypeOf = (c: Context) => (c.req.header("Content-Type") ?? "").split(";")[0]?.trim().toLowerCase();

/**
 * A form body's parameters. The form encoding is ASCII by definition (RFC 6749 Appendix B: UTF-8 bytes
 * percent-encoded), so the bytes are decoded as UTF-8 here: the runtime's `text()` warns about every body whose
 * type is not a text type.
 */
const formParameters = async (c: Context) => new URLSearchParams(new TextDecoder().decode(await c.req.arrayBuffer()));

/**
 * The token endpoint takes `application/x-www-form-urlencoded` only (RFC 6749 §3.2; docs/guides/oauth.md, 3. Exchange
 * the code).
 */
async function formBody(c: Context): Promise<URLSearchParams> {
  if (mediaTypeOf(c) !== FORM) throw invalidRequest(`The request body must be sent as ${FORM}.`);
  return formParameters(c);
}

/**
 * The revocation endpoint takes the form encoding (RFC 7009 §2.1) and JSON, as every body but the token endpoint's
 * (docs/oauth.md, 6. Revoke). A JSON body becomes the parameters a form would carry:
 * each of `names` must be a string when present; null counts as absent, as an empty form value does (RFC 6749
 * §3.1); other members are ignored like unknown parameters (RFC 6749 §3.2).
 */
async function formOrJsonBody(c: Context, names: readonly string[]): Promise<URLSearchParams> {
  const type = mediaTypeOf(c);
  if (type === FORM) return formParameters(c);
  if (type !== JSON_TYPE) throw invalidRequest(`The request body must be sent as ${FORM} or ${JSON_TYPE}.`);
  let body: unknown;
  try {
    body = JSON.parse(await c.req.text());
  } catch {
    throw invalidRequest("The request body is not valid JSON.");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidRequest("The request body must be a JSON object.");
  }
  const parameters = new URLSearchParams();
  for (const name of names) {
    const value = Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined;
    if (value === undefined || value === null) continue;
    if (typeof value !== "string") throw invalidRequest(`The member ${name} must be a string.`);
    parameters.set(name, value);
  }
  return parameters;
}

/**
 * RFC 7591 §3.1, RFC 7592 §2.2: the registration and update requests are JSON objects; so is the rotation's, whose
 * errors are `invalid_request` as it carries no metadata.
 */
async function jsonBody(c: Context, error: "invalid_client_metadata" | "invalid_request" = "invalid_client_metadata") {
  if (mediaTypeOf(c) !== JSON_TYPE) throw new OAuthError(error, `The request body must be sent as ${JSON_TYPE}.`);
  try {
    return JSON.parse(await c.req.text()) as unknown;
  } catch {
    throw new OAuthError(error, "The request body is not valid JSON.");
  }
}

/**
 * The client a configuration request names (RFC 7592 §2), by its registration access token. Its answers, errors
 * included, carry credentials or concern them and are never stored.
 */
function managed(c: Context<AppEnv>, deleting?: boolean) {
  doNotStore(c);
  const request = {
    clientId: c.req.param("clientId") ?? "",
    authorization: c.req.header("Authorization"),
    baseUrl: c.env.BASE_URL,
  };
  return managedClient(c.var.globalDeps, request, deleting);
}

/**
 * `/api/oauth`: registration (RFC 7591) with the client configuration endpoint (RFC 7592), token (RFC 6749 §3.2) and
 * revocation (RFC 7009). Thin: read the body, call one domain function, shape the answer. No CORS: browser scripts are
 * not clients of this service. Clients register in the global database; a token or revocation request works on the shard its code or token names
 * (docs/scaling.md, How a request finds its shard), where a token request finds the client's copy too
 * (docs/oauth.md, Decisions).
 */
export const oauthApi = new Hono<AppEnv>()
  .post("/register", async (c) => {
    // Set first, so that the 429 of the rate limit carries it too.
    doNotStore(c);
    await limitRegistrations(c.env.REGISTRATION_RATE_LIMIT, creatorNetworkOf(c));
    const metadata = parseClientMetadata(await jsonBody(c));
    const client = await registerClient(c.var.globalDeps, metadata, c.env.BASE_URL);
    return c.json(client, 201);
  })
  // The client configuration endpoint (RFC 7592 §2; docs/oauth.md, Managing your app).
  .get("/register/:clientId", async (c) => {
    const client = await managed(c);
    return c.json(clientInformation(client.client, client), 200);
  })
  .put("/register/:clientId", async (c) => {
    const client = await managed(c);
    return c.json(await updateClient(c.var.globalDeps, client, await jsonBody(c)), 200);
  })
  .delete("/register/:clientId", async (c) => {
    await deleteClient(c.var.globalDeps, await managed(c, true));
    return c.body(null, 204);
  })
  .post("/register/:clientId/rotate-secret", async (c) => {
    const client = await managed(c);
    // The body may be left out: `expires_in` then takes its default.
    const body = c.req.header("Content-Type") === undefined ? undefined : await jsonBody(c, "invalid_request");
    return c.json(await rotateClientSecret(c.var.globalDeps, client, previousSecretSeconds(body)), 200);
  })
  .post("/token", async (c) => {
    const form = await formBody(c);
    const budget = {
      limiter: c.env.TOKEN_RATE_LIMIT,
      addressLimiter: c.env.TOKEN_ADDRESS_RATE_LIMIT,
      clientAddress: clientAddressOf(c),
    };
    await spendRequestBudget(budget);
    useShard(c, shardOfTokenRequest(form));
    const tokens = await tokenRequest(c.var.deps, budget, c.req.header("Authorization"), form);
    doNotStore(c);
    return c.json(tokens, 200);
  })
  .post("/revoke", async (c) => {
    const parameters = await formOrJsonBody(c, REVOCATION_PARAMETERS);
    useShard(c, shardOfRevocation(parameters));
    await revocationRequest(c.var.deps, c.req.header("Authorization"), parameters);
    doNotStore(c);
    // RFC 7009 §2.2: 200, also for a token that was unknown or already revoked. The content is ignored by clients.
    return c.body(null, 200);
  });

/**
 * The token endpoint's 429 (docs/oauth.md, Token budget) keeps RFC 6749 §5.2's body, `{ error, error_description }`,
 * so that a client's OAuth library reads it like any token error; every other error goes to the OAuth mapping.
 */
const respondToTokenBudgetOrOAuthError: ErrorHandler<AppEnv> = (err, c) => {
  if (!(err instanceof TokenBudgetSpent)) return respondToOAuthError(err, c);
  doNotStore(c);
  for (const [name, value] of err.headers) c.header(name, value, { append: true });
  return c.json({ error: err.error, error_description: err.description }, 429);
};

oauthApi.onError(respondToTokenBudgetOrOAuthError);
