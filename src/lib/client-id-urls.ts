/**
 * A client_id that is the URL of the app's client ID metadata document (docs/oauth.md, Client ID metadata documents;
 * draft-ietf-oauth-client-id-metadata-document, Client Identifier), instead of an id this service issued.
 */

/** The longest such client_id: `oauth_clients.id` keeps it, in the global database and in every shard's copy. */
export const MAX_CLIENT_ID_URL_LENGTH = 255;

/** Whether a client_id is meant as a document's URL; `clientIdUrlProblem` then says whether it may be one. */
export const isClientIdUrl = (clientId: string) => /^https?:\/\//i.test(clientId);

/**
 * Why a URL client_id cannot name a metadata document, as a predicate of "The client_id", or undefined when it can:
 * a path, no fragment, no user name or password, no `.` or `..` segment (`new URL` would resolve it, so the document
 * fetched would not be at the URL named), at most 255 characters. The scheme is the outbound rules' to judge
 * (lib/public-address.ts): https, or http to a loopback address in local development only.
 */
export function clientIdUrlProblem(clientId: string): string | undefined {
  if (clientId.length > MAX_CLIENT_ID_URL_LENGTH) {
    return `must be at most ${MAX_CLIENT_ID_URL_LENGTH} characters long`;
  }
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return "must be an absolute URL";
  }
  if (clientId.includes("#")) return "must not contain a fragment (#)";
  if (url.username || url.password) return "must not contain a user name or password";
  const segments = (clientId.split("?")[0] ?? "").split("/").slice(3);
  if (segments.some((segment) => /^(\.|%2e){1,2}$/i.test(segment))) return "must not contain . or .. path segments";
  if (url.pathname === "/") return "must have a path after its host: the address of the document";
  return undefined;
}

/** The host a valid URL client_id names, which owners are shown beside the app's own name. */
export const clientIdHost = (clientId: string) => new URL(clientId).host;
