/**
 * A receiver's verification with nothing but WebCrypto: the two examples of docs/webhooks.md, kept here so that the
 * documented code is the tested code (test/webhooks/standard-webhooks.test.ts, test/webhooks/delivery.test.ts).
 */

/** `X-Service-Signature: t=…,v1=…[,v1=…]`: any one `v1` made with your secret is enough (two during a rotation). */
export async function verifyWebhookSignature(rawBody: string, header: string, secret: string, toleranceSeconds = 300) {
  const parts = header.split(",").map((part) => part.split("="));
  const timestamp = Number(parts.find(([name]) => name === "t")?.[1]);
  if (!Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const encoder = new TextEncoder();
  const hmac = { name: "HMAC", hash: "SHA-256" };
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), hmac, false, ["verify"]);
  const signed = encoder.encode(`${timestamp}.${rawBody}`);
  for (const [name, hex = ""] of parts) {
    if (name !== "v1") continue;
    const signature = new Uint8Array(hex.match(/../g)?.map((byte) => Number.parseInt(byte, 16)) ?? []);
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", key, signature, signed)) return true;
  }
  return false;
}

/**
 * Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>[ v1,<base64>]`, keyed by the
 * bytes the base64 after `whsec_` encodes (an older secret: its own bytes). Any one `v1` made with your secret is
 * enough (two during a rotation).
 */
export async function verifyStandardWebhook(rawBody: string, headers: Headers, secret: string, toleranceSeconds = 300) {
  const id = headers.get("webhook-id");
  const timestamp = Number(headers.get("webhook-timestamp"));
  if (!id || !Number.isInteger(timestamp) || Math.abs(Date.now() / 1000 - timestamp) > toleranceSeconds) return false;
  const bytes = (base64: string) => Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  // A secret made before Standard Webhooks (not whsec_ + 44 base64 characters) is a key as it is written.
  const secretBytes = /^whsec_[A-Za-z0-9+/]{43}=$/.test(secret)
    ? bytes(secret.slice("whsec_".length))
    : new TextEncoder().encode(secret);
  const hmac = { name: "HMAC", hash: "SHA-256" };
  const key = await crypto.subtle.importKey("raw", secretBytes, hmac, false, ["verify"]);
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${rawBody}`);
  for (const entry of (headers.get("webhook-signature") ?? "").split(" ")) {
    const [version, signature = ""] = entry.split(",");
    // An HMAC-SHA256 in base64 is 43 characters and one "=".
    if (version !== "v1" || !/^[A-Za-z0-9+/]{43}=$/.test(signature)) continue;
    // crypto.subtle.verify compares in constant time.
    if (await crypto.subtle.verify("HMAC", key, bytes(signature), signed)) return true;
  }
  return false;
}
