import { decodeBase64, encodeBase64, encodeHexLowerCase } from "@oslojs/encoding";

const encoder = new TextEncoder();

/**
 * A new signing secret of a webhook endpoint or an action: `whsec_` + 32 random bytes in standard base64, the form
 * the Standard Webhooks libraries decode, which base64url is not (docs/webhooks.md, The signatures; Older secrets).
 */
export const newSigningSecret = () => `whsec_${encodeBase64(crypto.getRandomValues(new Uint8Array(32)))}`;

/** The form `newSigningSecret` gives: 32 bytes are 43 standard base64 characters and one `=` of padding. */
const STANDARD_WEBHOOKS_SECRET = /^whsec_([A-Za-z0-9+/]{43}=)$/;

/**
 * The key of `webhook-signature` (docs/webhooks.md, The signatures): the bytes the base64 after `whsec_` encodes. A
 * secret of an older form (`whsec_` + base64url, or an action's `actsec_` + base64url: 43 characters without
 * padding, so never of the form above) keys it by its UTF-8 bytes, the same key as `X-Service-Signature`: the
 * Standard Webhooks libraries take such a key as a raw one (docs/webhooks.md, Older secrets).
 */
export function standardWebhooksKey(secret: string): Uint8Array {
  const encoded = STANDARD_WEBHOOKS_SECRET.exec(secret)?.[1];
  return encoded === undefined ? encoder.encode(secret) : decodeBase64(encoded);
}

/**
 * The secrets a request is signed with: the current one first, then, during a rotation, the previous one until it
 * expires (docs/webhooks.md, Rotating a secret).
 */
export type SigningSecrets = readonly [current: string] | readonly [current: string, previous: string];

/**
 * The signature headers of a delivery or an action call, one signature per secret (docs/webhooks.md, The signatures):
 * `X-Service-Signature` `t=<unix seconds>,v1=<hex>[,v1=…]`, HMAC-SHA256 keyed by the secret's UTF-8 over
 * `${t}.${rawBody}`, as stripe-node verifies it; and the Standard Webhooks headers, `webhook-signature`
 * `v1,<base64>[ v1,<base64>]` keyed by `standardWebhooksKey` over `${id}.${t}.${rawBody}`.
 */
export async function signatureHeaders(
  secrets: SigningSecrets,
  webhookId: string,
  rawBody: string,
  unixSeconds: number,
): Promise<Record<string, string>> {
  const stripeSigned = encoder.encode(`${unixSeconds}.${rawBody}`);
  const standardSigned = encoder.encode(`${webhookId}.${unixSeconds}.${rawBody}`);
  const [stripeSignatures, standardSignatures] = await Promise.all([
    Promise.all(
      secrets.map(async (secret) => `v1=${encodeHexLowerCase(await hmacSha256(encoder.encode(secret), stripeSigned))}`),
    ),
    Promise.all(
      secrets.map(
        async (secret) => `v1,${encodeBase64(await hmacSha256(standardWebhooksKey(secret), standardSigned))}`,
      ),
    ),
  ]);
  return {
    "X-Service-Signature": [`t=${unixSeconds}`, ...stripeSignatures].join(","),
    "webhook-id": webhookId,
    "webhook-timestamp": String(unixSeconds),
    "webhook-signature": standardSignatures.join(" "),
  };
}

/**
 * HMAC-SHA256 by the platform's Web Crypto (RFC 2104): native, where a JavaScript one cost the consumer a tenth of its
 * CPU, two or four of them per delivery (docs/performance.md).
 */
async function hmacSha256(key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", imported, data));
}
