import { and, eq, isNull, type SQL, sql } from "drizzle-orm";
import { oauthClients } from "../../db/schema";
import { SHARD_NAMES } from "../../db/shards";
import type { GlobalDependencies } from "../../dependencies";
import { invalidRequest, OAuthError } from "../../lib/oauth-errors";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { type EpochMs, iso } from "../../lib/time";
import type { ClientInformation } from "../../schemas/oauth";
import { isSecretOf } from "./client-authentication";
import { endConnections, updateCopies } from "./client-copies";
import {
  CLIENT_SECRET_PREFIX,
  clientInformation,
  clientRead,
  isClientIdShape,
  type OAuthClient,
  parseClientMetadata,
  registeredColumns,
} from "./clients";

/*
 * The client configuration endpoint (RFC 7592; docs/oauth.md, Managing your app): an app reads, updates and deletes
 * its registration, and rotates its secret, with the registration access token it got at registration. The token is
 * kept, not rotated, as RFC 7592 §3 allows: a rotation whose answer is lost then leaves the app its token to try again.
 */

/** The previous secret authenticates a day after a rotation, unless `expires_in` says otherwise; at most a week. */
const PREVIOUS_CLIENT_SECRET_SECONDS = 86_400;
const MAX_PREVIOUS_CLIENT_SECRET_SECONDS = 7 * 86_400;

/** A client whose registration access token the request holds, with what its answers name. */
export type ManagedClient = { client: OAuthClient; token: string; baseUrl: string };

/**
 * RFC 6750 §3.1: 401 with the Bearer challenge. One answer for a missing or wrong token, another client's and an
 * unknown client, so the endpoint tells nobody which clients exist.
 */
const invalidToken = () =>
  new OAuthError("invalid_token", "Send this client's registration access token as a Bearer token.", 401, {
    "WWW-Authenticate": 'Bearer realm="oauth", error="invalid_token"',
  });

const invalidMetadata = (description: string) => new OAuthError("invalid_client_metadata", description);

/**
 * The client a configuration request names, by the registration access token it sends as a Bearer token (RFC 6750
 * §2.1), compared as SHA-256 in constant time. A deleted client is unknown; `deleting` admits one whose deletion did
 * not finish (its token is cleared once every shard is done), so that a DELETE sent again completes it.
 */
export async function managedClient(
  deps: GlobalDependencies,
  request: { clientId: string; authorization: string | undefined; baseUrl: string },
  deleting = false,
): Promise<ManagedClient> {
  const token = /^Bearer +(\S+)$/i.exec(request.authorization?.trim() ?? "")?.[1];
  const client =
    token && isClientIdShape(request.clientId) ? await clientRead(deps.global, request.clientId).get() : undefined;
  if (!token || !client || !isSecretOf(client.registrationTokenHash, token) || (client.deletedAt && !deleting)) {
    throw invalidToken();
  }
  return { client, token, baseUrl: request.baseUrl };
}

/**
 * One change of a registration: the global row, if the client is not deleted meanwhile, its revision raised, then its
 * copies in every shard (client-copies.ts).
 */
async function changeClient(deps: GlobalDependencies, id: string, columns: Record<string, string | string[] | SQL>) {
  const [changed] = await deps.global
    .update(oauthClients)
    .set({ ...columns, revision: sql`${oauthClients.revision} + 1` })
    .where(and(eq(oauthClients.id, id), isNull(oauthClients.deletedAt)))
    .returning();
  if (!changed) throw invalidToken();
  await updateCopies(deps, changed);
  return changed;
}

/**
 * RFC 7592 §2.2: the body replaces the metadata, validated as registration validates it (clients.ts). It names the
 * client's own `client_id`; a `client_secret` in it must be the current one (a client never chooses its secret); and
 * `token_endpoint_auth_method` may change between the two secret methods only: a public client has no secret to
 * authenticate with, and a confidential one would lose it.
 */
export async function updateClient(
  deps: GlobalDependencies,
  managed: ManagedClient,
  body: unknown,
): Promise<ClientInformation> {
  const metadata = parseClientMetadata(body);
  const { client } = managed;
  const { client_id: clientId, client_secret: secret } = body as Record<string, unknown>;
  if (clientId !== client.id) {
    throw invalidMetadata("The member client_id must be this client's.");
  }
  if (secret !== undefined && (typeof secret !== "string" || !isSecretOf(client.secretHash, secret))) {
    throw invalidMetadata("The member client_secret must be the current secret, or be left out.");
  }
  if ((metadata.token_endpoint_auth_method === "none") !== (client.tokenEndpointAuthMethod === "none")) {
    throw invalidMetadata("The member token_endpoint_auth_method cannot change to or from none.");
  }
  return clientInformation(await changeClient(deps, client.id, registeredColumns(metadata)), managed);
}

/** The rotation's `expires_in` (docs/oauth.md, Managing your app), from a JSON body or none. */
export function previousSecretSeconds(body: unknown = {}): number {
  const { expires_in: seconds = PREVIOUS_CLIENT_SECRET_SECONDS } = (body ?? {}) as { expires_in?: unknown };
  if (
    typeof body !== "object" ||
    body === null ||
    Array.isArray(body) ||
    !Number.isInteger(seconds) ||
    (seconds as number) < 0 ||
    (seconds as number) > MAX_PREVIOUS_CLIENT_SECRET_SECONDS
  ) {
    throw invalidRequest(
      `The body must be a JSON object whose expires_in is a whole number of seconds from 0 to ${MAX_PREVIOUS_CLIENT_SECRET_SECONDS}.`,
    );
  }
  return seconds as number;
}

/**
 * `POST …/rotate-secret`, an extension of RFC 7592 (docs/oauth.md, Managing your app), as webhook secrets rotate
 * (src/domain/webhooks/secret-rotation.ts): a new secret, answered once, and the current one kept as the previous for
 * `expiresInSeconds`, both authenticating meanwhile (client-authentication.ts). ONE UPDATE computes both from the old
 * row, so of concurrent rotations each applies in turn and only the newest previous secret stays. Connections and
 * their tokens are untouched.
 */
export async function rotateClientSecret(
  deps: GlobalDependencies,
  managed: ManagedClient,
  expiresInSeconds: number,
  now: EpochMs = deps.clock(),
): Promise<ClientInformation & { previous_client_secret_expires_at: number }> {
  if (managed.client.secretHash === null) {
    throw invalidRequest("A public client (token_endpoint_auth_method none) has no secret to rotate.");
  }
  const secret = randomToken(CLIENT_SECRET_PREFIX);
  const expiresAt = now + expiresInSeconds * 1000;
  const rotated = await changeClient(deps, managed.client.id, {
    secretHash: sha256Hex(secret),
    previousSecretHash: sql`${oauthClients.secretHash}`,
    previousSecretExpiresAt: iso(expiresAt),
  });
  return {
    ...clientInformation(rotated, managed, secret),
    previous_client_secret_expires_at: Math.floor(expiresAt / 1000),
  };
}

/**
 * RFC 7592 §2.3: the client is deleted, unknown from then on, and every connection to it ends in every shard as the
 * owner's disconnection ends one (client-copies.ts). The global row first, so an approval racing it sees the deletion
 * (client-copies.ts, refreshCopy); its registration access token is cleared last, once every shard is done, so that a
 * deletion failing half-way can be sent again.
 */
export async function deleteClient(
  deps: GlobalDependencies,
  managed: ManagedClient,
  now: EpochMs = deps.clock(),
): Promise<void> {
  const [deleted] = await deps.global
    .update(oauthClients)
    .set({
      deletedAt: sql`coalesce(${oauthClients.deletedAt}, ${iso(now)})`,
      secretHash: null,
      previousSecretHash: null,
      revision: sql`${oauthClients.revision} + 1`,
    })
    .where(eq(oauthClients.id, managed.client.id))
    .returning();
  if (!deleted) throw invalidToken();
  await Promise.all(SHARD_NAMES.map((shard) => endConnections(deps.onShard(shard), deleted, iso(now))));
  await deps.global.update(oauthClients).set({ registrationTokenHash: null }).where(eq(oauthClients.id, deleted.id));
}
