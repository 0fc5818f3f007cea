// The app's own access token (docs/guides/oauth.md, The app as itself), for the client of the app's routes
// (`/app/…`): the client credentials grant of RFC 6749 §4.4 at the deployment's token endpoint.
import { DEFAULT_BASE_URL, PartnerApiError, type PartnerClientOptions } from "./client.js";
import { sendingWith } from "./requests.js";

export type AppCredentials = {
  clientId: string;
  clientSecret: string;
  /** How the client registered to authenticate (RFC 7591 §2): `client_secret_basic` unless said. */
  authMethod?: "client_secret_basic" | "client_secret_post";
};

/** The token endpoint's answer (RFC 6749 §5.1): no refresh token, ask for another once it expires. */
export type AppToken = { access_token: string; token_type: "Bearer"; expires_in: number; scope: "app" };

/** A credential's part of Basic authentication, form-urlencoded first (RFC 6749 §2.3.1). */
const formEncoded = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);

/**
 * An app token, scope `app`, for `createPartnerClient`: `baseUrl` is the same `/api/v1` as the client's, and the token
 * endpoint `/api/oauth/token` of its host is asked. A refusal throws `PartnerApiError` with the endpoint's
 * `error_description` as its message.
 */
export async function requestAppToken(
  credentials: AppCredentials,
  options: PartnerClientOptions = {},
): Promise<AppToken> {
  const { clientId, clientSecret } = credentials;
  const form = new URLSearchParams({ grant_type: "client_credentials", scope: "app" });
  const headers = new Headers({ ...options.headers, "Content-Type": "application/x-www-form-urlencoded" });
  if (credentials.authMethod === "client_secret_post") {
    form.set("client_id", clientId);
    form.set("client_secret", clientSecret);
  } else {
    headers.set("Authorization", `Basic ${btoa(`${formEncoded(clientId)}:${formEncoded(clientSecret)}`)}`);
  }
  const send = sendingWith(options.fetch ?? ((request) => fetch(request)), options.retries);
  const url = new URL("/api/oauth/token", options.baseUrl ?? DEFAULT_BASE_URL);
  const response = await send(new Request(url, { method: "POST", headers, body: form }));
  const body: unknown = await response.json().catch(() => undefined);
  if (!response.ok) throw new PartnerApiError(response.status, body, response.headers.get("X-Request-Id"));
  return body as AppToken;
}
