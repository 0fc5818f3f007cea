import { sql } from "drizzle-orm";
import { oauthClients } from "../../db/schema";
import type { GlobalDependencies } from "../../dependencies";
import { clientIdUrlProblem } from "../../lib/client-id-urls";
import { OAuthError } from "../../lib/oauth-errors";
import { getDocument, type OutboundOutcome, type OutboundPolicy } from "../../lib/outbound";
import { type EpochMs, HOUR_MS, iso } from "../../lib/time";
import type { ClientMetadata } from "../../schemas/oauth";
import { updateCopies } from "./client-copies";
import { clientRead, limitRegistrations, type OAuthClient, parseClientMetadata, registeredColumns } from "./clients";

/*
 * Client ID metadata documents (draft-ietf-oauth-client-id-metadata-document; docs/oauth.md, Client ID metadata
 * documents): an app whose client_id is an https URL has no registration here; the JSON document at that URL is its
 * metadata, read at the authorization endpoint and kept as a row of `oauth_clients` whose id is the URL, for as long
 * as the document's caching headers allow.
 */

/** The draft suggests 5 KB at most: a client's metadata is a name and a few URLs. */
const DOCUMENT_MAX_BYTES = 5 * 1024;
const DOCUMENT_TIMEOUT_MS = 5000;
/** A reading stays fresh at least 5 minutes, so that an app cannot make every page of an authorization fetch again. */
export const MIN_FRESH_MS = 5 * 60 * 1000;
/** At most a day, so that a changed document (another name, fewer redirect URIs) is read within a day. */
export const MAX_FRESH_MS = 24 * HOUR_MS;

/** What reading a document needs: the outbound rules, and the address whose registration budget a reading spends. */
export type DocumentReading = { outbound: OutboundPolicy; limiter: RateLimit; clientAddress: string | undefined };

/**
 * How long a document read now stays fresh (RFC 9111 §4.2.1): its `Cache-Control: max-age`, else its `Expires` after
 * its `Date`, held between 5 minutes and 24 hours. `no-store`, `no-cache` and no caching header at all get the floor:
 * the client must be stored to be approved and to authenticate later, and reading the document again on each of the
 * flow's pages would cost the owner a round trip to the app's server every time.
 */
function freshFor(headers: Headers | undefined, now: EpochMs): number {
  const cacheControl = headers?.get("Cache-Control") ?? "";
  const maxAge = /(?:^|[,\s])max-age\s*=\s*"?(\d+)/i.exec(cacheControl)?.[1];
  const expires = Date.parse(headers?.get("Expires") ?? "") - (Date.parse(headers?.get("Date") ?? "") || now);
  let fresh = maxAge === undefined ? expires || 0 : Number(maxAge) * 1000;
  if (/no-store|no-cache/i.test(cacheControl)) fresh = 0;
  return Math.min(MAX_FRESH_MS, Math.max(MIN_FRESH_MS, fresh));
}

/** Why an answer that is not a 2xx with text is no document, as the end of a sentence. */
function unreadable(outcome: Exclude<OutboundOutcome, { kind: "delivered" }>): string {
  switch (outcome.kind) {
    case "refused_address":
      return outcome.reason.replace(/^address cannot be fetched: /, "");
    case "unresolved":
      return "its host name could not be looked up";
    case "timeout":
      return `it did not answer within ${DOCUMENT_TIMEOUT_MS / 1000} seconds`;
    case "connection_failed":
      return "the connection to its host failed";
    case "redirect":
      return `it answered ${outcome.status}, a redirect, which is not followed: serve the document at the client_id itself`;
    case "http_error":
      return `it answered ${outcome.status}`;
    case "too_large":
      return `it is larger than ${DOCUMENT_MAX_BYTES / 1024} KB`;
    case "not_json":
      return "it is not UTF-8 text";
  }
}

/**
 * The metadata of a document, or why it is none: a JSON object whose `client_id` is its URL exactly, a public client
 * (no secret can be published, so `token_endpoint_auth_method` is `none`, or left out), with `client_name` and
 * `redirect_uris` as registration takes them. Its other members describe the app to every server it uses and are
 * ignored here.
 */
function documentMetadata(clientId: string, text: string): ClientMetadata | string {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch {
    return "it is not JSON";
  }
  if (typeof document !== "object" || document === null || Array.isArray(document)) return "it is not a JSON object";
  const {
    client_id,
    client_name,
    redirect_uris,
    token_endpoint_auth_method = "none",
  } = document as Record<string, unknown>;
  if (client_id !== clientId) return "its client_id is not the URL it is at, character for character";
  if (token_endpoint_auth_method !== "none" || "client_secret" in document) {
    return "its token_endpoint_auth_method must be none: a published document cannot hold a client secret, so the app is a public client, proven by PKCE";
  }
  try {
    return parseClientMetadata({ client_name, redirect_uris, token_endpoint_auth_method });
  } catch (error) {
    if (!(error instanceof OAuthError)) throw error;
    return error.description
      .replace(/^The request body/, "the document")
      .replace(/^The /, "its ")
      .replace(/\.$/, "");
  }
}

const cannotBeUsed = (why: string) => `The app's metadata document, at its client_id, cannot be used: ${why}.`;

/**
 * The client of a client_id that is a document's URL, for an authorization request, or the sentence of why it cannot
 * be used: the stored reading while it is fresh, else the document read again (a GET under the outbound rules, 5 s,
 * 5 KB, no redirect followed), which spends the address's registration budget, as registering does, and is stored with
 * its freshness. A reading that changed the name or the redirect URIs raises the client's revision and reaches the
 * copies in the shards (client-copies.ts). A stored reading is never used once stale here: the token endpoint alone
 * uses it as it is, and reads nothing from the app (client-authentication.ts).
 */
export async function documentClient(
  deps: GlobalDependencies,
  reading: DocumentReading,
  clientId: string,
  now: EpochMs = deps.clock(),
): Promise<OAuthClient | string> {
  const problem = clientIdUrlProblem(clientId);
  if (problem) return `The client_id ${problem}.`;
  const stored = await clientRead(deps.global, clientId).get();
  if (stored?.metadataFreshUntil && stored.metadataFreshUntil > iso(now)) return stored;
  await limitRegistrations(reading.limiter, reading.clientAddress);
  const outcome = await getDocument(reading.outbound, "OAuth", clientId, DOCUMENT_TIMEOUT_MS, DOCUMENT_MAX_BYTES);
  if (outcome.kind !== "delivered") return cannotBeUsed(unreadable(outcome));
  const metadata = documentMetadata(clientId, outcome.answer ?? "");
  if (typeof metadata === "string") return cannotBeUsed(metadata);
  const columns = {
    ...registeredColumns(metadata),
    metadataFetchedAt: iso(now),
    metadataFreshUntil: iso(now + freshFor(outcome.headers, now)),
  };
  const changed =
    stored !== undefined &&
    (stored.clientName !== columns.clientName ||
      JSON.stringify(stored.redirectUris) !== JSON.stringify(columns.redirectUris));
  const [client] = await deps.global
    .insert(oauthClients)
    .values({ id: clientId, ...columns, createdAt: iso(now) })
    .onConflictDoUpdate({
      target: oauthClients.id,
      set: changed ? { ...columns, revision: sql`${oauthClients.revision} + 1` } : columns,
    })
    .returning();
  if (!client) throw new Error("the client's row was not written");
  if (changed) await updateCopies(deps, client);
  return client;
}
