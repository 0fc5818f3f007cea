import { eq, sql } from "drizzle-orm";
import type { Database } from "../../db/client";
import { insertWithinLimit } from "../../db/insert-within-limit";
import { oauthClients } from "../../db/schema";
import type { GlobalDependencies } from "../../dependencies";
import { tooManyRequests } from "../../lib/api-error";
import { clientIdUrlProblem, isClientIdUrl } from "../../lib/client-id-urls";
import { OAuthError } from "../../lib/oauth-errors";
import { refusedPerMinute } from "../../lib/rate-limit-fields";
import { randomToken, sha256Hex } from "../../lib/secrets";
import { type EpochMs, HOUR_MS, iso } from "../../lib/time";
import { issueSentence } from "../../lib/validation";
import { API_SCOPE, APP_GRANT_TYPE, type ClientInformation, ClientMetadata, GRANT_TYPES } from "../../schemas/oauth";
import { oauthIssuer } from "./discovery";

export type OAuthClient = typeof oauthClients.$inferSelect;

/** Client ids are public: 16 random bytes are plenty to keep them unguessable and unique. */
export const CLIENT_ID_PREFIX = "cl_";
/** `cs_live_` + 32 random bytes: 256 bits, above RFC 9700's 128 (docs/architecture.md, OAuth). */
export const CLIENT_SECRET_PREFIX = "cs_live_";
/** The registration access token of RFC 7592 §3 (docs/oauth.md, Managing your app): `rat_live_` + 32 random bytes. */
export const REGISTRATION_TOKEN_PREFIX = "rat_live_";

/** `[[ratelimits]] REGISTRATION_RATE_LIMIT` in wrangler.toml: registrations per client address and minute. */
export const REGISTRATIONS_PER_MINUTE = 10;
/**
 * Clients no owner has approved yet, registered in the last hour, across the service (docs/guides/oauth.md,
 * 1. Register once): with a 24-hour life and at most 1 KB of metadata each, at most 24,000 such rows, tens of megabytes,
 * however many addresses register.
 */
export const UNAPPROVED_CLIENTS_PER_HOUR = 1000;

/**
 * Registration is open and each client stays a day unless approved, so it is limited per client address, an IPv6 one
 * as its /48, through the Rate Limiting binding (docs/oauth.md, Decisions); without an address (a service binding, a
 * test), not at all. Past it, the service's own 429 and error body (docs/errors.md): no OAuth error means a rate limit.
 */
export async function limitRegistrations(limiter: RateLimit, clientAddress: string | undefined): Promise<void> {
  if (clientAddress === undefined) return;
  const refused = await refusedPerMinute(limiter, clientAddress, "client_registrations", REGISTRATIONS_PER_MINUTE);
  if (!refused) return;
  throw tooManyRequests(
    `Too many registrations from this address: at most ${REGISTRATIONS_PER_MINUTE} a minute. Register once and keep the client_id.`,
    refused,
  );
}

/**
 * RFC 7591 §3.2.2: a redirect URI that cannot be one is `invalid_redirect_uri`; any other metadata problem, metadata
 * over a size bound too (a URI too long, too many of them), is `invalid_client_metadata`; both 400 with a sentence
 * naming the member.
 */
export function parseClientMetadata(body: unknown): ClientMetadata {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new OAuthError("invalid_client_metadata", "The request body must be a JSON object of client metadata.");
  }
  const result = ClientMetadata.safeParse(body);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const code =
    issue?.path[0] === "redirect_uris" && issue.code !== "too_big" ? "invalid_redirect_uri" : "invalid_client_metadata";
  const sentence = issue ? issueSentence("json", issue) : "The client metadata is not valid.";
  throw new OAuthError(code, sentence.replace(/^The field /, "The member "));
}

/** The columns metadata sets, at registration and at an update (RFC 7592 §2.2): duplicate redirect URIs folded. */
export const registeredColumns = (metadata: ClientMetadata) => ({
  clientName: metadata.client_name,
  redirectUris: [...new Set(metadata.redirect_uris)],
  tokenEndpointAuthMethod: metadata.token_endpoint_auth_method,
});

/**
 * RFC 7591 §3.2.1 with RFC 7592 §3: the registered metadata, the client configuration endpoint and the registration
 * access token the request holds (only its hash is stored), and the client secret only when one is issued now.
 */
export function clientInformation(
  client: OAuthClient,
  access: { baseUrl: string; token: string },
  clientSecret?: string,
): ClientInformation {
  return {
    registration_access_token: access.token,
    registration_client_uri: `${oauthIssuer(access.baseUrl)}/api/oauth/register/${client.id}`,
    client_id: client.id,
    ...(clientSecret === undefined ? {} : { client_secret: clientSecret, client_secret_expires_at: 0 }),
    client_id_issued_at: Math.floor(Date.parse(client.createdAt) / 1000),
    client_name: client.clientName,
    redirect_uris: client.redirectUris,
    token_endpoint_auth_method: client.tokenEndpointAuthMethod,
    grant_types: client.tokenEndpointAuthMethod === "none" ? [...GRANT_TYPES] : [...GRANT_TYPES, APP_GRANT_TYPE],
    response_types: ["code"],
    scope: API_SCOPE,
  };
}

/**
 * Registers a client (RFC 7591 §3; docs/guides/oauth.md, 1. Register once), open: a client does nothing until an owner
 * approves it. A secret and the registration access token are answered once and stored as their SHA-256; `none`
 * clients are public (RFC 6749 §2.1). Stored in the global database unless `UNAPPROVED_CLIENTS_PER_HOUR` unapproved
 * clients came in the last hour (429): counted and inserted in one batch, so simultaneous registrations never pass it.
 */
export async function registerClient(
  deps: GlobalDependencies,
  metadata: ClientMetadata,
  baseUrl: string,
  now: EpochMs = deps.clock(),
): Promise<ClientInformation> {
  const clientSecret = metadata.token_endpoint_auth_method === "none" ? undefined : randomToken(CLIENT_SECRET_PREFIX);
  const registrationToken = randomToken(REGISTRATION_TOKEN_PREFIX);
  const registeredSince = iso(now - HOUR_MS);
  // On the partial index `oauth_clients_unapproved` (created_at, never-approved clients only). Registered clients only:
  // the clients of metadata documents, read at the authorization page, are not registrations (docs/oauth.md, Client
  // ID metadata documents), so a flood of registrations never keeps an app such as an AI assistant from connecting.
  const unapprovedLastHour = sql`(select count(*) from ${oauthClients} where ${oauthClients.firstApprovedAt} is null and ${oauthClients.createdAt} > ${registeredSince} and ${oauthClients.metadataFetchedAt} is null)`;
  const client = await insertWithinLimit(
    deps.global,
    oauthClients,
    {
      id: randomToken(CLIENT_ID_PREFIX, 16),
      ...registeredColumns(metadata),
      secretHash: clientSecret === undefined ? null : sha256Hex(clientSecret),
      registrationTokenHash: sha256Hex(registrationToken),
      createdAt: iso(now),
    },
    UNAPPROVED_CLIENTS_PER_HOUR,
    unapprovedLastHour,
  );
  if (!client) {
    throw tooManyRequests(
      `Too many apps registered in the last hour: at most ${UNAPPROVED_CLIENTS_PER_HOUR} not yet approved. Try again later, or keep using a client_id you have.`,
      {
        policy: "unapproved_clients",
        quota: UNAPPROVED_CLIENTS_PER_HOUR,
        windowSeconds: 3600,
        remaining: 0,
        resetInSeconds: 3600,
      },
    );
  }
  return clientInformation(client, { baseUrl, token: registrationToken }, clientSecret);
}

/**
 * Whether `clientId` has the shape of an id this service issues, or of a metadata document's URL (docs/oauth.md, Client
 * ID metadata documents): one of another shape is unknown without a query.
 */
export const isClientIdShape = (clientId: string) =>
  /^[A-Za-z0-9_-]{1,64}$/.test(clientId) || (isClientIdUrl(clientId) && !clientIdUrlProblem(clientId));

/**
 * The query of the client with that id in `db`: the global database, or a shard, which holds a copy of every client
 * connected to one of its businesses (authorization.ts).
 */
export const clientRead = (db: Database, clientId: string) =>
  db.select().from(oauthClients).where(eq(oauthClients.id, clientId));

/**
 * The client with that id, or undefined, for a deleted one too; an id of the wrong shape costs no query. Clients are
 * registered and found in the global database, as a client is named before any business is
 * (src/db/schema/directory.ts).
 */
export async function findClient(deps: GlobalDependencies, clientId: string): Promise<OAuthClient | undefined> {
  if (!isClientIdShape(clientId)) return undefined;
  const client = await clientRead(deps.global, clientId).get();
  return client?.deletedAt === null ? client : undefined;
}
