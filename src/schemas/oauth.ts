import { z } from "@hono/zod-openapi";
import { TOKEN_ENDPOINT_AUTH_METHODS } from "../db/schema";
import { redirectUriProblem } from "../lib/redirect-uris";
import { visibleText } from "../lib/validation";

/** The only scope (docs/guides/oauth.md, Endpoints). */
export const API_SCOPE = "api";

export const GRANT_TYPES = ["authorization_code", "refresh_token"] as const;
/** The app as itself (RFC 6749 §4.4; docs/oauth.md, The app as itself): a confidential client's grant besides those. */
export const APP_GRANT_TYPE = "client_credentials";
export const APP_SCOPE = "app";

/** At most 5 redirect URIs per client (docs/guides/oauth.md, 1. Register once). */
export const MAX_REDIRECT_URIS = 5;
/**
 * Registration is open and each client is a row of the global database, so every member stored is bounded
 * (docs/guides/oauth.md, 1. Register once): a redirect URI at most 512 characters (printable ASCII, so as many bytes),
 * the name at most 100 characters, and what the row stores of them, the name and the JSON array of redirect URIs, at
 * most 1,024 bytes of UTF-8. Past a bound: `invalid_client_metadata` (RFC 7591 §3.2.2), the sentence naming the member.
 */
export const MAX_REDIRECT_URI_LENGTH = 512;
export const MAX_CLIENT_NAME_LENGTH = 100;
export const MAX_CLIENT_METADATA_BYTES = 1024;

const redirectUri = z
  .string()
  .max(MAX_REDIRECT_URI_LENGTH)
  .superRefine((uri, ctx) => {
    const problem = redirectUriProblem(uri);
    if (problem) ctx.addIssue({ code: "custom", message: problem, input: uri });
  });

/**
 * RFC 7591 §2 client metadata, as far as this service uses it (docs/guides/oauth.md, 1. Register once). Others are
 * ignored, as RFC 7591 §2 allows ("The authorization server ... MAY ignore" values it does not understand).
 * `token_endpoint_auth_method` defaults to `client_secret_basic`, RFC 7591 §2's default.
 */
export const ClientMetadata = z
  .object({
    redirect_uris: z.array(redirectUri).min(1).max(MAX_REDIRECT_URIS),
    // The name the owner approves on the consent page and sees in the dashboard: one line, no invisible or
    // direction-changing character (docs/security.md, "Partner text"); `invalid_client_metadata` (RFC 7591 §3.2.2).
    client_name: z
      .string()
      .trim()
      .min(1)
      .max(MAX_CLIENT_NAME_LENGTH)
      .superRefine(visibleText({ lines: false })),
    token_endpoint_auth_method: z.enum(TOKEN_ENDPOINT_AUTH_METHODS).default("client_secret_basic"),
    // Accepted when they describe what this service does; answered with what it does (RFC 7591 §3.2.1).
    grant_types: z
      .array(z.enum([...GRANT_TYPES, APP_GRANT_TYPE]))
      .min(1)
      .optional(),
    response_types: z.array(z.literal("code")).min(1).optional(),
    scope: z.literal(API_SCOPE).optional(),
  })
  .superRefine(({ client_name, redirect_uris }, ctx) => {
    const bytes = new TextEncoder().encode(client_name + JSON.stringify(redirect_uris)).length;
    if (bytes > MAX_CLIENT_METADATA_BYTES) {
      ctx.addIssue({
        code: "custom",
        path: [],
        message: `has ${bytes} bytes of client_name and redirect_uris to store: at most ${MAX_CLIENT_METADATA_BYTES} are allowed`,
        input: redirect_uris,
      });
    }
  });
export type ClientMetadata = z.output<typeof ClientMetadata>;

/**
 * RFC 7591 §3.2.1 and RFC 7592 §3: the registered metadata, plus the credentials. `client_secret` appears once, when
 * registered or rotated (docs/oauth.md, Managing your app).
 */
export type ClientInformation = {
  registration_access_token: string;
  registration_client_uri: string;
  client_id: string;
  client_secret?: string;
  client_id_issued_at: number;
  /** 0: the secret does not expire (RFC 7591 §3.2.1, required when a secret is issued). */
  client_secret_expires_at?: number;
  client_name: string;
  redirect_uris: string[];
  token_endpoint_auth_method: (typeof TOKEN_ENDPOINT_AUTH_METHODS)[number];
  grant_types: ((typeof GRANT_TYPES)[number] | typeof APP_GRANT_TYPE)[];
  response_types: ["code"];
  scope: typeof API_SCOPE;
};

/** RFC 6749 §5.1 (docs/guides/oauth.md, 3. Exchange the code). */
export type TokenResponse = {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: typeof API_SCOPE;
};
