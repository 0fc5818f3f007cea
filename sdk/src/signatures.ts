// The verification of a signed request of the service (a webhook delivery, an action call), with nothing but
// WebCrypto, so that it runs in Node 22 or newer, Workers, Deno, Bun and browsers. Each request carries two signatures
// of the same body and timestamp (docs/webhooks.md, The signatures); one is enough, and the one verified is the
// scheme whose headers are present: Standard Webhooks first, else `X-Service-Signature`.

/** Why a request was refused. */
export type VerificationFailure =
  /** Neither scheme's headers are all there. */
  | "missing_headers"
  /** A timestamp that is not whole unix seconds. */
  | "malformed_headers"
  /** The timestamp is further from the clock than the tolerance: a replay, or a clock that is off. */
  | "timestamp_outside_tolerance"
  /** No signature of the header was made with any of the secrets over this body. */
  | "no_matching_signature"
  /** The signature verified, but the body is not a JSON object. */
  | "invalid_body";

export class WebhookVerificationError extends Error {
  readonly reason: VerificationFailure;

  constructor(reason: VerificationFailure, message: string) {
    super(message);
    this.name = "WebhookVerificationError";
    this.reason = reason;
  }
}

export type SignatureScheme = "standard-webhooks" | "x-service-signature";

/** The request's headers: a Fetch `Headers`, or an object of them (Node's `IncomingHttpHeaders`, any case). */
export type HeadersLike = Headers | Record<string, string | readonly string[] | undefined>;

export type VerifyOptions = {
  /** How far the timestamp may be from the clock, either way: 300 seconds unless said (docs/webhooks.md). */
  toleranceSeconds?: number;
  /** The clock, for a test or a replay of a stored request: a `Date` or milliseconds since the epoch. */
  now?: Date | number;
};

const encoder = new TextEncoder();
const HMAC = { name: "HMAC", hash: "SHA-256" } as const;
/** A secret of the current form: `whsec_` and the standard base64 of 32 bytes (docs/webhooks.md, Older secrets). */
const STANDARD_SECRET = /^whsec_([A-Za-z0-9+/]{43}=)$/;
/** An HMAC-SHA256 in lowercase hex (`v1=` of `X-Service-Signature`) or in standard base64 (`v1,` of Standard Webhooks). */
const HEX_SIGNATURE = /^[0-9a-f]{64}$/;
const BASE64_SIGNATURE = /^[A-Za-z0-9+/]{43}=$/;

/** A Fetch `Headers` by its `get`, not by `instanceof`: a framework's own Headers class is another constructor. */
const isFetchHeaders = (headers: HeadersLike): headers is Headers => typeof headers.get === "function";

function headerOf(headers: HeadersLike, name: string): string | undefined {
  if (isFetchHeaders(headers)) return headers.get(name) ?? undefined;
  const key = Object.keys(headers).find((each) => each.toLowerCase() === name);
  const value = key === undefined ? undefined : headers[key];
  return typeof value === "string" ? value : value?.join(", ");
}

const base64Bytes = (base64: string) => Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
const hexBytes = (hex: string) => Uint8Array.from(hex.match(/../g) ?? [], (byte) => Number.parseInt(byte, 16));

/**
 * The HMAC key of each scheme (docs/webhooks.md, The signatures; Older secrets): `X-Service-Signature` is keyed by the
 * secret's UTF-8 bytes; Standard Webhooks by the bytes the base64 after `whsec_` encodes, or, for a secret of an
 * older form, by its UTF-8 bytes too (what the Standard Webhooks libraries call a raw key).
 */
function keyBytes(secret: string, scheme: SignatureScheme): Uint8Array {
  const encoded = scheme === "standard-webhooks" ? STANDARD_SECRET.exec(secret)?.[1] : undefined;
  return encoded === undefined ? encoder.encode(secret) : base64Bytes(encoded);
}

type Signed = { scheme: SignatureScheme; timestamp: string; content: string; signatures: Uint8Array[] };

/** The scheme to verify, its timestamp, the text it signs and its signatures (any other version is left out). */
function signedParts(rawBody: string, headers: HeadersLike): Signed {
  const id = headerOf(headers, "webhook-id");
  const timestamp = headerOf(headers, "webhook-timestamp");
  const standard = headerOf(headers, "webhook-signature");
  if (id !== undefined && timestamp !== undefined && standard !== undefined) {
    // Standard Webhooks: `v1,<base64>` entries separated by spaces, over `${id}.${timestamp}.${body}`.
    const signatures = standard
      .split(" ")
      .map((entry) => entry.split(","))
      .filter(([version, signature = ""]) => version === "v1" && BASE64_SIGNATURE.test(signature))
      .map(([, signature = ""]) => base64Bytes(signature));
    return { scheme: "standard-webhooks", timestamp, content: `${id}.${timestamp}.${rawBody}`, signatures };
  }
  const header = headerOf(headers, "x-service-signature");
  if (header === undefined) {
    throw new WebhookVerificationError(
      "missing_headers",
      "The request has neither webhook-id, webhook-timestamp and webhook-signature nor X-Service-Signature.",
    );
  }
  // Stripe's scheme: `t=<seconds>,v1=<hex>[,v1=<hex>]`, over `${t}.${body}`.
  const pairs = header.split(",").map((part) => part.trim().split("="));
  const t = pairs.find(([name]) => name === "t")?.[1] ?? "";
  const signatures = pairs
    .filter(([name, hex = ""]) => name === "v1" && HEX_SIGNATURE.test(hex))
    .map(([, hex = ""]) => hexBytes(hex));
  return { scheme: "x-service-signature", timestamp: t, content: `${t}.${rawBody}`, signatures };
}

function checkTimestamp(timestamp: string, options: VerifyOptions) {
  if (!/^\d{1,12}$/.test(timestamp)) {
    throw new WebhookVerificationError("malformed_headers", "The signature's timestamp is not whole unix seconds.");
  }
  const tolerance = options.toleranceSeconds ?? 300;
  const now = options.now === undefined ? Date.now() : Number(options.now);
  if (Math.abs(now / 1000 - Number(timestamp)) > tolerance) {
    throw new WebhookVerificationError(
      "timestamp_outside_tolerance",
      `The signature's timestamp is more than ${tolerance} seconds from the clock.`,
    );
  }
}

/**
 * Verifies a signed request of the service over its raw body (before it is parsed), and answers the scheme that
 * verified it. Any one signature made with any one of `secrets` is enough: during a rotation the header carries one
 * per secret, and a receiver may hold both (docs/webhooks.md, Rotating a secret). `crypto.subtle.verify` compares in
 * constant time, so the time taken tells nothing of the expected signature.
 */
export async function verifySignedRequest(
  rawBody: string,
  headers: HeadersLike,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): Promise<SignatureScheme> {
  const candidates = (typeof secrets === "string" ? [secrets] : [...secrets]).filter((secret) => secret !== "");
  if (candidates.length === 0) throw new TypeError("verifying a signature needs at least one secret");
  const { scheme, timestamp, content, signatures } = signedParts(rawBody, headers);
  checkTimestamp(timestamp, options);
  const signed = encoder.encode(content);
  for (const secret of candidates) {
    const key = await crypto.subtle.importKey("raw", keyBytes(secret, scheme), HMAC, false, ["verify"]);
    for (const signature of signatures) {
      if (await crypto.subtle.verify("HMAC", key, signature, signed)) return scheme;
    }
  }
  throw new WebhookVerificationError(
    "no_matching_signature",
    "No signature of the request was made with the secret over this body.",
  );
}

/** The body, once verified, as a JSON object. */
export function parseVerifiedBody(rawBody: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    throw new WebhookVerificationError("invalid_body", "The request's body is not a JSON object.");
  }
  return parsed as Record<string, unknown>;
}
