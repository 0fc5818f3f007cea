import type { RunnableQuery } from "drizzle-orm/runnable-query";
import { LEGACY_SHARD } from "../../db/shards";
import type { Dependencies } from "../../dependencies";
import { invalidClient, invalidRequest } from "../../lib/oauth-errors";
import { optionalParameter } from "../../lib/oauth-parameters";
import { secretsEqual } from "../../lib/secret-comparison";
import { sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import { clientRead, findClient, isClientIdShape, type OAuthClient } from "./clients";

/** Client authentication at the token endpoint (RFC 6749 §2.3, §3.2.1), and identification at the revocation one. */

export type PresentedCredentials = {
  method: OAuthClient["tokenEndpointAuthMethod"];
  clientId: string;
  secret: string | undefined;
};

/** RFC 6749 §2.3.1: the id and secret inside Basic are each application/x-www-form-urlencoded first. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, " "));
  } catch {
    throw invalidClient("The Basic credentials are not form-urlencoded (RFC 6749 §2.3.1).");
  }
}

function basicCredentials(authorization: string): { clientId: string; secret: string } {
  const match = /^Basic +([A-Za-z0-9+/]+={0,2})$/i.exec(authorization.trim());
  let decoded: string | undefined;
  try {
    decoded = match?.[1] ? atob(match[1]) : undefined;
  } catch {
    decoded = undefined;
  }
  const colon = decoded?.indexOf(":") ?? -1;
  if (decoded === undefined || colon < 0) {
    throw invalidClient("The Authorization header must be Basic with base64(client_id:client_secret).");
  }
  return { clientId: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) };
}

/** What the request presents: Basic, secret in the body, or only a client_id (a public client). */
export function presentedCredentials(authorization: string | undefined, form: URLSearchParams): PresentedCredentials {
  const bodyId = optionalParameter(form, "client_id");
  const bodySecret = optionalParameter(form, "client_secret");
  if (authorization !== undefined && /^Basic\b/i.test(authorization.trim())) {
    // RFC 6749 §2.3: "The client MUST NOT use more than one authentication method in each request."
    if (bodySecret !== undefined) {
      throw invalidRequest("Send the client secret either in the Authorization header or in the body, not both.");
    }
    const basic = basicCredentials(authorization);
    if (bodyId !== undefined && bodyId !== basic.clientId) {
      throw invalidRequest("The client_id in the body differs from the one in the Authorization header.");
    }
    return { method: "client_secret_basic", clientId: basic.clientId, secret: basic.secret };
  }
  if (bodyId === undefined) {
    throw invalidClient("The client is not identified: send client_id, and the client's secret if it has one.");
  }
  if (bodySecret !== undefined) return { method: "client_secret_post", clientId: bodyId, secret: bodySecret };
  return { method: "none", clientId: bodyId, secret: undefined };
}

const UNKNOWN_CLIENT = "No client is registered with this client_id.";

/** The registered client a request names, in the global database, or invalid_client. */
async function namedClient(deps: Dependencies, presented: PresentedCredentials): Promise<OAuthClient> {
  const client = await findClient(deps, presented.clientId);
  if (!client) throw invalidClient(UNKNOWN_CLIENT);
  return client;
}

/** Whether `secret` is the one whose SHA-256 is `hash`, compared in constant time; a null hash matches nothing. */
export const isSecretOf = (hash: string | null, secret: string) =>
  hash !== null && secretsEqual(sha256Hex(secret), hash);

/**
 * The client's current secret, or the previous one of a rotation until it expires (docs/oauth.md, Managing your
 * app); a public client has none to match.
 */
const secretMatches = (client: OAuthClient, secret: string | undefined, now: EpochMs) =>
  secret !== undefined &&
  (isSecretOf(client.secretHash, secret) ||
    (client.previousSecretExpiresAt !== null &&
      client.previousSecretExpiresAt > iso(now) &&
      isSecretOf(client.previousSecretHash, secret)));

const WRONG_SECRET = "The client secret is not correct.";
const PUBLIC_CLIENT =
  "This client is public (token_endpoint_auth_method none): it must send its client_id and no secret.";

/**
 * Authenticates the client of a token request (RFC 6749 §2.3, §3.2.1) by the method it registered (RFC 7591 §2,
 * `token_endpoint_auth_method`): a confidential client must present its secret that way, and a public client
 * (`none`) must not present a secret at all. Every failure is the same `invalid_client` (401), whose sentence says
 * what was expected but never whether a secret was close.
 */
function authenticated(client: OAuthClient | undefined, presented: PresentedCredentials, now: EpochMs): OAuthClient {
  // A deleted client's copy is as unknown as no client (docs/oauth.md, Managing your app).
  if (!client || client.deletedAt !== null) throw invalidClient(UNKNOWN_CLIENT);
  if (client.tokenEndpointAuthMethod !== presented.method) {
    throw invalidClient(
      client.tokenEndpointAuthMethod === "none"
        ? PUBLIC_CLIENT
        : `This client authenticates with ${client.tokenEndpointAuthMethod}: ${
            client.tokenEndpointAuthMethod === "client_secret_basic"
              ? "send client_id and client_secret in the Authorization: Basic header."
              : "send client_id and client_secret in the form body."
          }`,
    );
  }
  if (presented.method !== "none" && !secretMatches(client, presented.secret, now)) throw invalidClient(WRONG_SECRET);
  return client;
}

/** The read of the code or refresh token a token request presents, run in one batch with its client's. */
export type GrantRead<Row> = RunnableQuery<Row[], "sqlite">;

/**
 * The token request's client, authenticated, and its grant's row (`grantRead`), in one round trip on the shard the
 * grant names, which holds a copy of every client connected there (docs/oauth.md, Decisions). A client without one
 * there has no valid grant there; it is read in the global database only to answer as RFC 6749 §5.2 does.
 */
export async function authenticateWithGrant<Row>(
  deps: Dependencies,
  presented: PresentedCredentials,
  grantRead: GrantRead<Row> | undefined,
): Promise<{ client: OAuthClient; grant: Row | undefined }> {
  if (!isClientIdShape(presented.clientId)) throw invalidClient(UNKNOWN_CLIENT);
  const copyRead = clientRead(deps.db, presented.clientId);
  const [[copy], [grant]] = grantRead ? await deps.db.batch([copyRead, grantRead]) : [await copyRead, []];
  const client = copy ?? (deps.shard === LEGACY_SHARD ? undefined : await findClient(deps, presented.clientId));
  return { client: authenticated(client, presented, deps.clock()), grant };
}

/**
 * The client of a revocation request: its client_id is enough, for a confidential client too (docs/guides/oauth.md,
 * 6. Revoke; docs/decisions.md, OAuth): revoking
 * only ends access, and whoever holds a token could use it anyway. A secret that is sent, in the body or in Basic,
 * must still be the client's, so a client with a wrong secret learns it here as at the token endpoint.
 */
export async function identifyRevokingClient(
  deps: Dependencies,
  authorization: string | undefined,
  parameters: URLSearchParams,
): Promise<OAuthClient> {
  const presented = presentedCredentials(authorization, parameters);
  const client = await namedClient(deps, presented);
  if (presented.secret !== undefined && !secretMatches(client, presented.secret, deps.clock())) {
    throw invalidClient(client.secretHash === null ? PUBLIC_CLIENT : WRONG_SECRET);
  }
  return client;
}
